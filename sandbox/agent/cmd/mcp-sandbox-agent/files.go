package main

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent/proto"
)

// The file tools' work (proto.File): done here, as the sandbox
// user, so one tool call costs one round trip. Paths are fenced to the
// sandbox's areas: a symlink is followed only while it stays inside them.

// areas are where the file tools may act.
var areas = []string{"/workspace", "/tmp"}

const (
	maxLinkHops = 16
	maxListOut  = 8 << 20 // bytes of entries a list sends at most
	maxMsg      = 1024
	maxEntry    = 48 << 10 // bytes of one entry's JSON line
)

// fileErr is a failure of a file operation: a class the engine words,
// and the path (or link target) it concerns.
type fileErr struct{ class, msg string }

func fail(class, msg string) *fileErr { return &fileErr{class, msg} }

// classify turns a system error on p into a class.
func classify(err error, p string) *fileErr {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("notexist", p)
	case errors.As(err, &errno) && errno == syscall.ENOTDIR:
		return fail("notdir", p)
	case errors.As(err, &errno) && errno == syscall.EISDIR:
		return fail("isdir", p)
	case errors.As(err, &errno) && errno == syscall.ENOSPC, errors.As(err, &errno) && errno == syscall.EDQUOT:
		return fail("nospace", p)
	case errors.As(err, &errno) && errno == syscall.ELOOP:
		return fail("linkout", p)
	case errors.Is(err, fs.ErrPermission), errors.As(err, &errno) && errno == syscall.EROFS:
		return fail("perm", p)
	}
	return fail("io", err.Error())
}

func areaOf(p string) string {
	for _, a := range areas {
		if p == a || strings.HasPrefix(p, a+"/") {
			return a
		}
	}
	return ""
}

// resolve follows the links in p (clean, absolute, in an area) component
// by component, the last one only if followLast, and refuses a link that
// leads out of the areas. A missing component ends the walk: nothing
// beyond it can be a link.
func resolve(p string, followLast bool) (string, *fileErr) {
	hops := 0
	cur := p
	for {
		root := areaOf(cur)
		if root == "" {
			return "", fail("bad", cur)
		}
		rel := strings.TrimPrefix(cur[len(root):], "/")
		if rel == "" {
			return root, nil
		}
		parts := strings.Split(rel, "/")
		done := root
		restarted := false
		for i, part := range parts {
			next := done + "/" + part
			last := i == len(parts)-1
			st, err := os.Lstat(next)
			if errors.Is(err, fs.ErrNotExist) {
				return path.Join(done, strings.Join(parts[i:], "/")), nil
			}
			if err != nil {
				return "", classify(err, next)
			}
			if st.Mode()&fs.ModeSymlink == 0 || (last && !followLast) {
				done = next
				continue
			}
			hops++
			if hops > maxLinkHops {
				return "", fail("loop", p)
			}
			t, err := os.Readlink(next)
			if err != nil {
				return "", classify(err, next)
			}
			abs := t
			if !path.IsAbs(t) {
				abs = path.Join(done, t)
			}
			abs = path.Clean(abs)
			if areaOf(abs) == "" {
				return "", fail("linkout", next+"\x00"+t)
			}
			cur = path.Join(append([]string{abs}, parts[i+1:]...)...)
			restarted = true
			break
		}
		if !restarted {
			return done, nil
		}
	}
}

// doFile runs one file request and answers it: data in "out" frames
// ("ID\n" + bytes), then one "filedone" frame.
func (a *agent) doFile(r proto.File) {
	res := proto.FileDone{ID: r.ID}
	var ferr *fileErr
	if path.Clean(r.Path) != r.Path || areaOf(r.Path) == "" || strings.ContainsRune(r.Path, 0) {
		ferr = fail("bad", "")
	} else {
		switch r.Op {
		case proto.OpWrite:
			ferr = writeFile(r, &res)
		case proto.OpRead:
			ferr = a.readFile(r, &res)
		case proto.OpList:
			ferr = a.listFiles(r, &res)
		default:
			ferr = fail("bad", "")
		}
	}
	if ferr != nil {
		res.Err = ferr.class
		res.Msg = ferr.msg
		if len(res.Msg) > maxMsg {
			res.Msg = res.Msg[:maxMsg]
		}
	}
	b, _ := json.Marshal(res)
	a.send("filedone", b)
}

// writeFile writes (or, with r.Append, adds to) the file at r.Path, and
// says in res where and how many bytes it now holds.
func writeFile(r proto.File, res *proto.FileDone) *fileErr {
	target, ferr := resolve(r.Path, true)
	if ferr != nil {
		return ferr
	}
	if target == areaOf(target) {
		return fail("isdir", target)
	}
	res.Path = target
	var old []byte
	if r.Append {
		if old, ferr = readForAppend(target, int64(len(r.Data)), r.Max); ferr != nil {
			return ferr
		}
	}
	if ferr := replaceFile(target, old, r.Data); ferr != nil {
		return ferr
	}
	res.N = int64(len(old) + len(r.Data))
	res.Size = res.N
	return nil
}

// readForAppend reads what target holds now, so that adding more bytes
// keeps it whole: nothing when it does not exist, and an error when it is
// not a regular file or when it and the more bytes together are over max.
func readForAppend(target string, more, max int64) ([]byte, *fileErr) {
	f, err := os.OpenFile(target, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, classify(err, target)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, classify(err, target)
	}
	if st.IsDir() {
		return nil, fail("isdir", target)
	}
	if !st.Mode().IsRegular() {
		return nil, fail("notreg", target)
	}
	if st.Size()+more > max {
		return nil, fail("toobig", target)
	}
	old, err := io.ReadAll(io.LimitReader(f, max-more+1))
	if err != nil {
		return nil, classify(err, target)
	}
	if int64(len(old))+more > max {
		return nil, fail("toobig", target)
	}
	return old, nil
}

// replaceFile writes old then data to a fresh file renamed over target:
// what is there is replaced whole (as an extracting tar does), never half
// written. The missing parents of target are made first.
func replaceFile(target string, old, data []byte) *fileErr {
	dir := path.Dir(target)
	if ferr := mkdirs(dir); ferr != nil {
		return ferr
	}
	tmp, err := os.CreateTemp(dir, ".mcp-sandbox-write-")
	if err != nil {
		return classify(err, dir)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(old); err != nil {
		return classify(err, target)
	}
	if _, err := tmp.Write(data); err != nil {
		return classify(err, target)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return classify(err, target)
	}
	if err := tmp.Close(); err != nil {
		return classify(err, target)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) && (errno == syscall.EEXIST || errno == syscall.ENOTEMPTY) {
			return fail("isdir", target)
		}
		return classify(err, target)
	}
	ok = true
	return nil
}

// mkdirs makes dir and its missing parents (mode 0755) below its area.
func mkdirs(dir string) *fileErr {
	root := areaOf(dir)
	rel := strings.TrimPrefix(dir[len(root):], "/")
	if rel == "" {
		return nil
	}
	cur := root
	for _, part := range strings.Split(rel, "/") {
		cur += "/" + part
		err := os.Mkdir(cur, 0o755)
		switch {
		case err == nil:
			_ = os.Chmod(cur, 0o755) // whatever the umask
		case errors.Is(err, fs.ErrExist):
			st, err := os.Lstat(cur)
			if err != nil {
				return classify(err, cur)
			}
			if !st.IsDir() {
				return fail("notdir", cur)
			}
		default:
			return classify(err, cur)
		}
	}
	return nil
}

func (a *agent) readFile(r proto.File, res *proto.FileDone) *fileErr {
	target, ferr := resolve(r.Path, true)
	if ferr != nil {
		return ferr
	}
	res.Path = target
	// No following of a link swapped in since, and no waiting on a FIFO.
	f, err := os.OpenFile(target, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return classify(err, target)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return classify(err, target)
	}
	if st.IsDir() {
		return fail("isdir", target)
	}
	if !st.Mode().IsRegular() {
		return fail("notreg", target)
	}
	res.Size = st.Size()
	if r.Offset > st.Size() {
		return fail("offset", target)
	}
	if r.Offset > 0 {
		if _, err := f.Seek(r.Offset, io.SeekStart); err != nil {
			return classify(err, target)
		}
	}
	n, err := a.forward("out", r.ID, f, r.Max)
	res.N += n
	if err != nil {
		return classify(err, target)
	}
	return nil
}

func (a *agent) listFiles(r proto.File, res *proto.FileDone) *fileErr {
	target, ferr := resolve(r.Path, true)
	if ferr != nil {
		return ferr
	}
	res.Path = target
	st, err := os.Lstat(target)
	if err != nil {
		return classify(err, target)
	}
	l := &lister{a: a, prefix: strconv.Itoa(r.ID) + "\n", limit: r.Limit}
	if !st.IsDir() {
		l.add("", target, st)
	} else {
		f, err := os.Open(target)
		if err != nil {
			return classify(err, target)
		}
		f.Close()
		l.walk(target, "", r.Recursive)
	}
	l.flush()
	res.N = int64(l.n)
	res.Truncated = l.full
	return nil
}

// lister sends the entries of a listing in frames of about chunk bytes,
// each a JSON line.
type lister struct {
	a      *agent
	prefix string
	limit  int
	buf    []byte
	n      int
	sent   int
	full   bool
}

func (l *lister) walk(dir, rel string, recursive bool) {
	ents, err := os.ReadDir(dir)
	if err != nil && len(ents) == 0 {
		return // unreadable below the top: not descended into
	}
	for _, e := range ents {
		if l.full {
			return
		}
		st, err := e.Info()
		if err != nil {
			continue // gone since
		}
		name := e.Name()
		if rel != "" {
			name = rel + "/" + name
		}
		l.add(name, dir+"/"+e.Name(), st)
		if recursive && st.IsDir() {
			l.walk(dir+"/"+e.Name(), name, true)
		}
	}
}

func (l *lister) add(name, full string, st fs.FileInfo) {
	if l.n >= l.limit || l.sent+len(l.buf) >= maxListOut {
		l.full = true
		return
	}
	e := proto.ListEntry{P: name, S: st.Size(), M: uint32(st.Mode()), T: st.ModTime().Unix()}
	if st.Mode()&fs.ModeSymlink != 0 {
		e.L, _ = os.Readlink(full)
	}
	if st.IsDir() {
		e.S = 0
	}
	b, _ := json.Marshal(e)
	if len(b) > maxEntry {
		return // a name no engine frame could carry
	}
	if len(l.buf)+len(b)+1 > chunk {
		l.flush()
	}
	l.buf = append(append(l.buf, b...), '\n')
	l.n++
}

func (l *lister) flush() {
	if len(l.buf) == 0 {
		return
	}
	l.a.send("out", append([]byte(l.prefix), l.buf...))
	l.sent += len(l.buf)
	l.buf = l.buf[:0]
}
