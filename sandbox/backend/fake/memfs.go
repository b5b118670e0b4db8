package fake

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// memfs is a container's file system: nodes by clean absolute path. Two
// paths holding the same *node are hard links.
type memfs struct {
	mu    sync.Mutex
	nodes map[string]*node
	// writable are the only trees a process may write (the workspace and
	// /tmp; the root file system is read-only).
	writable []string
}

type node struct {
	mode     fs.FileMode
	data     []byte
	target   string // symlinks
	uid, gid int
	mtime    time.Time
}

func newFS(uid, gid int, tools []string) *memfs {
	m := &memfs{nodes: map[string]*node{}, writable: []string{"/workspace", "/tmp"}}
	now := time.Now()
	for _, d := range []string{"/", "/bin", "/usr", "/usr/bin", "/etc", "/proc", "/var", "/var/cache"} {
		m.nodes[d] = &node{mode: fs.ModeDir | 0o755, mtime: now}
	}
	for _, d := range []string{"/workspace", "/tmp"} {
		m.nodes[d] = &node{mode: fs.ModeDir | 0o755, uid: uid, gid: gid, mtime: now}
	}
	m.nodes["/tmp"].mode = fs.ModeDir | fs.ModeSticky | 0o777
	m.nodes["/etc/passwd"] = &node{mode: 0o644, data: []byte("root:x:0:0:root:/root:/bin/sh\n"), mtime: now}
	for _, t := range tools {
		m.nodes["/bin/"+t] = &node{mode: 0o755, data: []byte("#!fake " + t + "\n"), mtime: now}
	}
	return m
}

// pathErr is the error the shell prints as "op path: message".
func pathErr(op, p string, err error) error { return &os.PathError{Op: op, Path: p, Err: err} }

// resolve follows the symlinks in p (all of them, or all but the last
// component when noFollowLast), within this file system. Call with m.mu held.
func (m *memfs) resolve(p string, noFollowLast bool) (string, error) {
	p = path.Clean("/" + p)
	for hops := 0; hops < 40; hops++ {
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		cur := "/"
		changed := false
		for i, part := range parts {
			if part == "" {
				continue
			}
			next := path.Join(cur, part)
			n := m.nodes[next]
			last := i == len(parts)-1
			if n != nil && n.mode&fs.ModeSymlink != 0 && !(last && noFollowLast) {
				t := n.target
				if !path.IsAbs(t) {
					t = path.Join(cur, t)
				}
				p = path.Join(append([]string{t}, parts[i+1:]...)...)
				changed = true
				break
			}
			if n != nil && !last && !n.mode.IsDir() {
				return "", pathErr("open", p, fs.ErrInvalid)
			}
			cur = next
		}
		if !changed {
			return cur, nil
		}
	}
	return "", pathErr("open", p, fs.ErrInvalid)
}

// canWrite reports whether a process may create or change p.
func (m *memfs) canWrite(p string) bool {
	for _, w := range m.writable {
		if p == w || strings.HasPrefix(p, w+"/") {
			return true
		}
	}
	return false
}

// lstat returns the node at p without following a final symlink.
func (m *memfs) lstat(p string) (*node, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lstatLocked(p)
}

func (m *memfs) lstatLocked(p string) (*node, string, error) { return m.statLocked(p, true) }

func (m *memfs) stat(p string) (*node, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.statLocked(p, false)
}

// statLocked finds p's node, following a final symlink unless noFollow.
func (m *memfs) statLocked(p string, noFollow bool) (*node, string, error) {
	rp, err := m.resolve(p, noFollow)
	if err != nil {
		return nil, "", err
	}
	n := m.nodes[rp]
	if n == nil {
		return nil, rp, pathErr("stat", p, fs.ErrNotExist)
	}
	return n, rp, nil
}

// create makes (or, unless excl, truncates) a regular file at p.
func (m *memfs) create(p string, mode fs.FileMode, uid, gid int, excl, trunc bool) (*node, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rp, err := m.resolve(p, false)
	if err != nil {
		return nil, err
	}
	if n := m.nodes[rp]; n != nil {
		if excl {
			return nil, pathErr("open", p, fs.ErrExist)
		}
		if n.mode.IsDir() {
			return nil, pathErr("open", p, errIsDir)
		}
		if !m.canWrite(rp) {
			return nil, pathErr("open", p, fs.ErrPermission)
		}
		if trunc {
			n.data = nil
			n.mtime = time.Now()
		}
		return n, nil
	}
	if parent := m.nodes[path.Dir(rp)]; parent == nil || !parent.mode.IsDir() {
		return nil, pathErr("open", p, fs.ErrNotExist)
	}
	if !m.canWrite(rp) {
		return nil, pathErr("open", p, errReadOnly)
	}
	n := &node{mode: mode.Perm(), uid: uid, gid: gid, mtime: time.Now()}
	m.nodes[rp] = n
	return n, nil
}

// mkdir makes a directory; parents makes the missing ones above too.
func (m *memfs) mkdir(p string, uid, gid int, parents bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rp, err := m.resolve(p, false)
	if err != nil {
		return err
	}
	if n := m.nodes[rp]; n != nil {
		if parents && n.mode.IsDir() {
			return nil
		}
		return pathErr("mkdir", p, fs.ErrExist)
	}
	if !m.canWrite(rp) {
		return pathErr("mkdir", p, errReadOnly)
	}
	if parent := m.nodes[path.Dir(rp)]; parent == nil {
		if !parents {
			return pathErr("mkdir", p, fs.ErrNotExist)
		}
		m.mu.Unlock()
		err := m.mkdir(path.Dir(rp), uid, gid, true)
		m.mu.Lock()
		if err != nil {
			return err
		}
	} else if !parent.mode.IsDir() {
		return pathErr("mkdir", p, fs.ErrInvalid)
	}
	m.nodes[rp] = &node{mode: fs.ModeDir | 0o755, uid: uid, gid: gid, mtime: time.Now()}
	return nil
}

// link makes newPath a symlink to target (symbolic) or a hard link to the
// file at target; force replaces what newPath names.
func (m *memfs) link(target, newPath string, symbolic, force bool, uid, gid int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rp, err := m.resolve(newPath, true)
	if err != nil {
		return err
	}
	if existing := m.nodes[rp]; existing != nil {
		if existing.mode.IsDir() && !symbolic {
			// ln f dir puts the link inside dir.
			rp = path.Join(rp, path.Base(target))
		} else if !force {
			return pathErr("ln", newPath, fs.ErrExist)
		}
	}
	if !m.canWrite(rp) {
		return pathErr("ln", newPath, errReadOnly)
	}
	if parent := m.nodes[path.Dir(rp)]; parent == nil || !parent.mode.IsDir() {
		return pathErr("ln", newPath, fs.ErrNotExist)
	}
	if symbolic {
		m.nodes[rp] = &node{mode: fs.ModeSymlink | 0o777, target: target, uid: uid, gid: gid, mtime: time.Now()}
		return nil
	}
	tp, err := m.resolve(target, false)
	if err != nil {
		return err
	}
	n := m.nodes[tp]
	if n == nil {
		return pathErr("ln", target, fs.ErrNotExist)
	}
	if n.mode.IsDir() {
		return pathErr("ln", target, fs.ErrInvalid)
	}
	m.nodes[rp] = n
	return nil
}

// links counts the paths holding n.
func (m *memfs) links(n *node) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := 0
	for _, o := range m.nodes {
		if o == n {
			k++
		}
	}
	return k
}

// list returns the names directly inside directory rp, sorted.
func (m *memfs) list(rp string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	prefix := strings.TrimSuffix(rp, "/") + "/"
	for p := range m.nodes {
		if p != "/" && strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], "/") {
			out = append(out, p[len(prefix):])
		}
	}
	slices.Sort(out)
	return out
}

// read returns a copy of a file's bytes.
func (m *memfs) read(p string) ([]byte, error) {
	n, _, err := m.stat(p)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return nil, pathErr("read", p, errIsDir)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(n.data), nil
}

var (
	errIsDir    = &fsError{"is a directory"}
	errReadOnly = &fsError{"read-only file system"}
)

type fsError struct{ s string }

func (e *fsError) Error() string { return e.s }

// fileInfo is a node as fs.FileInfo.
type fileInfo struct {
	name string
	n    *node
	size int64
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) Mode() fs.FileMode  { return fi.n.mode }
func (fi fileInfo) ModTime() time.Time { return fi.n.mtime }
func (fi fileInfo) IsDir() bool        { return fi.n.mode.IsDir() }
func (fi fileInfo) Sys() any           { return nil }

func (m *memfs) info(p string, n *node) fileInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fileInfo{name: path.Base(p), n: n, size: int64(len(n.data))}
}

// openFile is an open regular file: reads from a snapshot, writes append
// to (or overwrite from the start of) the node.
type openFile struct {
	m   *memfs
	n   *node
	r   *bytes.Reader
	off int
}

func (f *openFile) Read(p []byte) (int, error) {
	if f.r == nil {
		return 0, io.EOF
	}
	return f.r.Read(p)
}

func (f *openFile) Write(p []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.off < 0 {
		f.n.data = append(f.n.data, p...)
	} else {
		end := f.off + len(p)
		if end > len(f.n.data) {
			f.n.data = append(f.n.data, make([]byte, end-len(f.n.data))...)
		}
		copy(f.n.data[f.off:], p)
		f.off = end
	}
	f.n.mtime = time.Now()
	return len(p), nil
}

func (f *openFile) Close() error { return nil }

// discard is /dev/null.
type discard struct{}

func (discard) Read([]byte) (int, error)    { return 0, io.EOF }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

// open opens p as the shell's redirections do.
func (m *memfs) open(p string, flag int, perm fs.FileMode, uid, gid int) (io.ReadWriteCloser, error) {
	if p == "/dev/null" {
		return discard{}, nil
	}
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		n, _, err := m.stat(p)
		if err != nil {
			return nil, err
		}
		if n.mode.IsDir() {
			return nil, pathErr("open", p, errIsDir)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		return &openFile{m: m, n: n, r: bytes.NewReader(bytes.Clone(n.data))}, nil
	}
	var n *node
	var err error
	if flag&os.O_CREATE != 0 {
		n, err = m.create(p, perm, uid, gid, flag&os.O_EXCL != 0, flag&os.O_TRUNC != 0)
	} else {
		n, _, err = m.stat(p)
		if err == nil {
			m.mu.Lock()
			rp, _ := m.resolve(p, false)
			ok := m.canWrite(rp)
			m.mu.Unlock()
			if !ok {
				err = pathErr("open", p, errReadOnly)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	f := &openFile{m: m, n: n}
	if flag&os.O_APPEND != 0 {
		f.off = -1
	}
	return f, nil
}

// remove removes p and what is below it (rm -rf), where writable.
func (m *memfs) remove(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rp, err := m.resolve(p, true)
	if err != nil || !m.canWrite(rp) || rp == "/workspace" || rp == "/tmp" {
		return
	}
	for q := range m.nodes {
		if q == rp || strings.HasPrefix(q, rp+"/") {
			delete(m.nodes, q)
		}
	}
}
