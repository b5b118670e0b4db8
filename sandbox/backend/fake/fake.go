package fake

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Op names a backend operation, for [Backend.Fail] and [Backend.Calls].
type Op string

// The operations.
const (
	OpCreate      Op = "Create"
	OpExec        Op = "Exec"
	OpRemove      Op = "Remove"
	OpRename      Op = "Rename"
	OpList        Op = "List"
	OpUsage       Op = "Usage"
	OpEnsureImage Op = "EnsureImage"
	OpCopyTo      Op = "CopyTo"
	OpCopyFrom    Op = "CopyFrom"
	OpStatPath    Op = "StatPath"
	OpRunHelper   Op = "RunHelper"
	OpWaitExit    Op = "WaitExit"
	OpAttach      Op = "Attach"
	OpInspect     Op = "Inspect"
	OpVolumes     Op = "RemoveOrphanVolumes"
)

// DefaultImage is the image a new Backend has: busybox-like, user 1000.
const DefaultImage = "fake/busybox:1"

// Image is an image the backend holds.
type Image struct {
	// User is the image's configured user ("" for none).
	User string
}

// Backend is the in-memory backend. The zero value is not usable; call New.
type Backend struct {
	mu         sync.Mutex
	images     map[string]Image
	containers map[string]*container
	volumes    map[string]*volume
	next       int
	gone       bool
	faults     map[Op]*fault
	delays     map[Op]time.Duration
	calls      map[Op]int
}

type fault struct {
	n   int // calls left to fail; < 0: every call
	err error
}

type container struct {
	id      string
	name    string
	spec    backend.ContainerSpec
	created time.Time
	fs      *memfs
	uid     int
	gid     int
	volumes []string
	// ctx ends when the container stops; its processes run under it.
	ctx   context.Context
	stop  context.CancelFunc
	done  chan struct{} // closed when it stops
	exit  backend.ContainerExit
	procs int
	pids  int
}

type volume struct {
	name    string
	labels  map[string]string
	created time.Time
	usedBy  string // container id, "" when unused
}

// New returns a backend holding DefaultImage.
func New() *Backend {
	return &Backend{
		images:     map[string]Image{DefaultImage: {}},
		containers: map[string]*container{},
		volumes:    map[string]*volume{},
		faults:     map[Op]*fault{},
		delays:     map[Op]time.Duration{},
		calls:      map[Op]int{},
	}
}

// AddImage makes an image present.
func (b *Backend) AddImage(name string, img Image) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.images[name] = img
}

// Fail makes the next n calls of op fail with err (n < 0: every call until
// Heal). err should wrap one of backend's error classes where the real
// engine's would.
func (b *Backend) Fail(op Op, n int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults[op] = &fault{n: n, err: err}
}

// Heal clears every injected fault and brings the engine back.
func (b *Backend) Heal() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.faults)
	b.gone = false
}

// SetGone makes the engine unreachable (every call fails with
// backend.ErrDockerUnreachable, waits included) or brings it back.
func (b *Backend) SetGone(gone bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gone = gone
}

// Delay makes every call of op take d first (on the clock: a synctest
// bubble's fake one inside a bubble).
func (b *Backend) Delay(op Op, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.delays[op] = d
}

// Calls returns how many times op was called.
func (b *Backend) Calls(op Op) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[op]
}

// enter counts a call of op, applies its delay and returns the fault to
// report, if any.
func (b *Backend) enter(ctx context.Context, op Op) error {
	b.mu.Lock()
	b.calls[op]++
	d := b.delays[op]
	b.mu.Unlock()
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone {
		return fmt.Errorf("%w: fake engine gone (injected)", backend.ErrDockerUnreachable)
	}
	if f := b.faults[op]; f != nil && f.n != 0 {
		if f.n > 0 {
			f.n--
		}
		return f.err
	}
	return nil
}

// Container is a container as the test sees it.
type Container struct {
	ID, Name string
	Spec     backend.ContainerSpec
	Running  bool
}

// Containers returns every container, helpers included, by creation.
func (b *Backend) Containers() []Container {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Container
	for _, c := range b.containers {
		out = append(out, Container{ID: c.id, Name: c.name, Spec: c.spec, Running: c.running()})
	}
	slices.SortFunc(out, func(a, c Container) int { return strings.Compare(a.ID, c.ID) })
	return out
}

// Vanish removes a container as from outside the engine (docker rm -f).
func (b *Backend) Vanish(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(id)
}

// Exit stops a running container on its own with exit (docker kill: 137;
// an OOM kill: OOMKilled).
func (b *Backend) Exit(id string, exit backend.ContainerExit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.containers[id]; c != nil && c.running() {
		c.exit = exit
		c.stop()
		close(c.done)
	}
}

// Put adds a running container as another server (or a dead one) made it,
// with spec's labels as they are, and returns its id.
func (b *Backend) Put(spec backend.ContainerSpec) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.newContainerLocked(spec, 1000, 1000)
	return c.id
}

// PutVolume adds an unused volume with these labels, as a server that made
// it and died (or one that has yet to attach it) left it.
func (b *Backend) PutVolume(name string, labels map[string]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.volumes[name] = &volume{name: name, labels: maps.Clone(labels), created: time.Now()}
}

// Volumes returns the names of the volumes there are, sorted.
func (b *Backend) Volumes() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for name := range b.volumes {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func (c *container) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

func parseUser(u string) (int, int) {
	uid, gid, ok := strings.Cut(u, ":")
	a, err1 := strconv.Atoi(uid)
	g, err2 := strconv.Atoi(gid)
	if !ok || err1 != nil || err2 != nil {
		return 1000, 1000
	}
	return a, g
}

func (b *Backend) newContainerLocked(spec backend.ContainerSpec, uid, gid int) *container {
	b.next++
	id := fmt.Sprintf("fake%012d", b.next)
	ctx, stop := context.WithCancel(context.Background())
	c := &container{
		id: id, name: spec.Name, spec: spec, created: time.Now(), fs: newFS(uid, gid, Commands),
		uid: uid, gid: gid, ctx: ctx, stop: stop, done: make(chan struct{}), pids: 1,
	}
	c.spec.Labels = maps.Clone(spec.Labels)
	b.containers[id] = c
	return c
}

// Create makes and starts a container from spec, with a workspace volume
// (and an install cache volume when spec.CacheUser is set).
func (b *Backend) Create(ctx context.Context, spec backend.ContainerSpec) (string, error) {
	if err := b.enter(ctx, OpCreate); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.images[spec.Image]; !ok {
		return "", fmt.Errorf("%w: %s (fake)", backend.ErrImageNotFound, spec.Image)
	}
	for _, c := range b.containers {
		if c.name == spec.Name {
			return "", fmt.Errorf("create %s: the name is in use by container %s", spec.Name, c.id)
		}
	}
	uid, gid := parseUser(spec.User)
	c := b.newContainerLocked(spec, uid, gid)
	vols := []string{strings.TrimPrefix(spec.Name, backend.NamePrefix) + "-ws-" + c.id}
	if spec.CacheUser != "" {
		vols = append(vols, strings.TrimPrefix(spec.Name, backend.NamePrefix)+"-cache-"+c.id)
	}
	for _, v := range vols {
		// The container's labels, as the Docker backend gives them.
		labels := maps.Clone(spec.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[backend.LabelCreatedAt] = time.Now().UTC().Format(time.RFC3339Nano)
		b.volumes[v] = &volume{name: v, labels: labels, created: time.Now(), usedBy: c.id}
	}
	c.volumes = vols
	return c.id, nil
}

// get returns a running container.
func (b *Backend) get(id string) (*container, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.containers[id]
	if c == nil {
		return nil, fmt.Errorf("no such container: %s", id)
	}
	if !c.running() {
		return nil, fmt.Errorf("container %s is not running", id)
	}
	return c, nil
}

// start runs spec in c as a process and returns a channel that gets its
// exit code (-1 when killed through ctx or because c stopped).
func (b *Backend) start(ctx context.Context, c *container, spec backend.ExecSpec, stdin io.Reader) <-chan int {
	pctx, cancel := context.WithCancel(ctx)
	stopWith := context.AfterFunc(c.ctx, cancel)
	uid, gid := c.uid, c.gid
	if spec.User != "" {
		uid, gid = parseUser(spec.User)
	}
	vars := append(slices.Clone(c.spec.Env), spec.Env...)
	dir := spec.WorkDir
	if dir == "" {
		dir = backend.Workspace
	}
	stdout, stderr := spec.Stdout, spec.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	// One goroutine writes to each of stdout and stderr at a time.
	out := &lockedWriter{w: stdout}
	errw := &lockedWriter{w: stderr}
	b.mu.Lock()
	c.procs++
	b.mu.Unlock()
	code := make(chan int, 1)
	go func() {
		defer cancel()
		defer stopWith()
		e := &env{fs: c.fs, uid: uid, gid: gid, vars: vars}
		n := e.run(pctx, spec.Cmd, dir, stdin, out, errw)
		b.mu.Lock()
		c.procs--
		b.mu.Unlock()
		code <- n
	}()
	return code
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Exec runs spec in a running container until it exits or ctx ends.
func (b *Backend) Exec(ctx context.Context, containerID string, spec backend.ExecSpec) (backend.ExecStatus, error) {
	if err := b.enter(ctx, OpExec); err != nil {
		return backend.ExecStatus{}, err
	}
	if len(spec.Cmd) == 0 {
		return backend.ExecStatus{}, errors.New("exec: empty command")
	}
	c, err := b.get(containerID)
	if err != nil {
		return backend.ExecStatus{}, err
	}
	n := <-b.start(ctx, c, spec, spec.Stdin)
	if n < 0 {
		if ctx.Err() != nil {
			return backend.ExecStatus{ExitCode: 137, Killed: true}, ctx.Err()
		}
		return backend.ExecStatus{ExitCode: 137}, fmt.Errorf("container %s stopped", containerID)
	}
	return backend.ExecStatus{ExitCode: n}, nil
}

// Remove removes a container, its helpers and its volumes; what is gone
// already is no error.
func (b *Backend) Remove(ctx context.Context, containerID string) error {
	if err := b.enter(ctx, OpRemove); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(containerID)
	return nil
}

func (b *Backend) removeLocked(id string) {
	c := b.containers[id]
	if c == nil {
		return
	}
	sid := c.spec.Labels[backend.LabelID]
	for hid, h := range b.containers {
		if sid != "" && h.spec.Labels[backend.LabelHelper] == sid && hid != id {
			b.removeLocked(hid)
		}
	}
	if c.running() {
		c.exit = backend.ContainerExit{ExitCode: 137}
		close(c.done)
	}
	c.stop()
	for _, v := range c.volumes {
		delete(b.volumes, v)
	}
	delete(b.containers, id)
}

// Rename renames a container; a name in use is an error.
func (b *Backend) Rename(ctx context.Context, containerID, name string) error {
	if err := b.enter(ctx, OpRename); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.containers[containerID]
	if c == nil {
		return fmt.Errorf("rename: no such container: %s", containerID)
	}
	for _, o := range b.containers {
		if o != c && o.name == name {
			return fmt.Errorf("rename: the name %s is in use", name)
		}
	}
	c.name = name
	return nil
}

func (c *container) info() backend.ContainerInfo {
	state := "running"
	if !c.running() {
		state = "exited"
	}
	return backend.ContainerInfo{
		ID: c.id, Name: c.name, Image: c.spec.Image, State: state, Created: c.created,
		Labels: maps.Clone(c.spec.Labels), MemoryBytes: c.spec.MemoryBytes, NanoCPUs: c.spec.NanoCPUs,
		Pids: c.spec.Pids, Network: c.spec.Network, Runtime: c.spec.Runtime,
	}
}

// List returns the managed containers, oldest first.
func (b *Backend) List(ctx context.Context) ([]backend.ContainerInfo, error) {
	if err := b.enter(ctx, OpList); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []backend.ContainerInfo
	for _, c := range b.containers {
		if c.spec.Labels[backend.LabelManaged] == "true" {
			out = append(out, c.info())
		}
	}
	slices.SortFunc(out, func(a, c backend.ContainerInfo) int { return strings.Compare(a.ID, c.ID) })
	return out, nil
}

// Inspect describes one container with its limits.
func (b *Backend) Inspect(ctx context.Context, containerID string) (backend.ContainerInfo, error) {
	if err := b.enter(ctx, OpInspect); err != nil {
		return backend.ContainerInfo{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.containers[containerID]
	if c == nil {
		return backend.ContainerInfo{}, fmt.Errorf("no such container: %s", containerID)
	}
	return c.info(), nil
}

// Usage reports a simulated reading: a MiB per process, one pid per
// process besides init.
func (b *Backend) Usage(ctx context.Context, containerID string) (backend.Usage, error) {
	if err := b.enter(ctx, OpUsage); err != nil {
		return backend.Usage{}, err
	}
	c, err := b.get(containerID)
	if err != nil {
		return backend.Usage{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := uint64(1 + c.procs)
	return backend.Usage{MemoryBytes: n << 20, MemoryLimit: uint64(c.spec.MemoryBytes), Pids: n, SampledAt: time.Now()}, nil
}

// EnsureImage reports a present image; an absent one cannot be pulled.
func (b *Backend) EnsureImage(ctx context.Context, image, policy string, progress func(backend.PullProgress)) (backend.ImageInfo, error) {
	if err := b.enter(ctx, OpEnsureImage); err != nil {
		return backend.ImageInfo{}, err
	}
	b.mu.Lock()
	img, ok := b.images[image]
	b.mu.Unlock()
	if !ok {
		return backend.ImageInfo{}, fmt.Errorf("%w: %s (the fake backend pulls nothing)", backend.ErrImageNotFound, image)
	}
	return backend.ImageInfo{ID: "sha256:fake-" + image, User: img.User}, nil
}

// inside reports whether p is dir or below it.
func inside(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// CopyTo extracts a tar stream into dir; an entry reaching out of dir (a
// ".." or absolute name, a hard link to outside, a path through a symlink)
// is refused.
func (b *Backend) CopyTo(ctx context.Context, containerID, dir string, r io.Reader) error {
	if err := b.enter(ctx, OpCopyTo); err != nil {
		return err
	}
	c, err := b.get(containerID)
	if err != nil {
		return err
	}
	dir = path.Clean(dir)
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("copy to %s: %w", dir, err)
		}
		if path.IsAbs(h.Name) {
			return fmt.Errorf("copy to %s: absolute entry %q refused", dir, h.Name)
		}
		dst := path.Join(dir, h.Name)
		if !inside(dir, dst) {
			return fmt.Errorf("copy to %s: entry %q reaches out of it", dir, h.Name)
		}
		// No entry is written through a symlink.
		c.fs.mu.Lock()
		for p := path.Dir(dst); inside(dir, p) && p != dir; p = path.Dir(p) {
			if n := c.fs.nodes[p]; n != nil && n.mode&fs.ModeSymlink != 0 {
				c.fs.mu.Unlock()
				return fmt.Errorf("copy to %s: entry %q goes through a symlink", dir, h.Name)
			}
		}
		c.fs.mu.Unlock()
		uid, gid := h.Uid, h.Gid
		switch h.Typeflag {
		case tar.TypeDir:
			if err := c.fs.mkdir(dst, uid, gid, true); err != nil {
				return err
			}
			c.fs.mu.Lock()
			c.fs.nodes[dst].mode = fs.ModeDir | fs.FileMode(h.Mode).Perm()
			c.fs.mu.Unlock()
		case tar.TypeReg:
			body, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			c.fs.remove(dst)
			n, err := c.fs.create(dst, fs.FileMode(h.Mode), uid, gid, true, true)
			if err != nil {
				return err
			}
			c.fs.mu.Lock()
			n.data, n.mtime = body, h.ModTime
			c.fs.mu.Unlock()
		case tar.TypeSymlink:
			c.fs.remove(dst)
			if err := c.fs.link(h.Linkname, dst, true, true, uid, gid); err != nil {
				return err
			}
		case tar.TypeLink:
			target := path.Join(dir, h.Linkname)
			if path.IsAbs(h.Linkname) || !inside(dir, target) {
				return fmt.Errorf("copy to %s: hard link %q to %q outside refused", dir, h.Name, h.Linkname)
			}
			if err := c.fs.link(target, dst, false, true, uid, gid); err != nil {
				return err
			}
		default:
			return fmt.Errorf("copy to %s: entry %q of type %q refused", dir, h.Name, h.Typeflag)
		}
	}
}

// CopyFrom returns a tar stream of p, entries named from its base name
// down, links as links.
func (b *Backend) CopyFrom(ctx context.Context, containerID, p string) (io.ReadCloser, error) {
	if err := b.enter(ctx, OpCopyFrom); err != nil {
		return nil, err
	}
	c, err := b.get(containerID)
	if err != nil {
		return nil, err
	}
	buf, err := tarOf(c.fs, p)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(buf), nil
}

// tarOf archives p (not following a final symlink) and what is below it.
func tarOf(m *memfs, p string) (*bytes.Buffer, error) {
	_, rp, err := m.lstat(p)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	m.mu.Lock()
	var paths []string
	for q := range m.nodes {
		if inside(rp, q) {
			paths = append(paths, q)
		}
	}
	slices.Sort(paths)
	base := path.Dir(rp)
	for _, q := range paths {
		n := m.nodes[q]
		name := strings.TrimPrefix(strings.TrimPrefix(q, base), "/")
		h := &tar.Header{Name: name, Mode: int64(n.mode.Perm()), Uid: n.uid, Gid: n.gid, ModTime: n.mtime}
		switch {
		case n.mode.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		case n.mode&fs.ModeSymlink != 0:
			h.Typeflag, h.Linkname = tar.TypeSymlink, n.target
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(n.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			m.mu.Unlock()
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			_, _ = tw.Write(n.data)
		}
	}
	m.mu.Unlock()
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}

// StatPath describes a path without following a final symlink.
func (b *Backend) StatPath(ctx context.Context, containerID, p string) (backend.PathStat, error) {
	if err := b.enter(ctx, OpStatPath); err != nil {
		return backend.PathStat{}, err
	}
	c, err := b.get(containerID)
	if err != nil {
		return backend.PathStat{}, err
	}
	n, rp, err := c.fs.lstat(p)
	if err != nil {
		return backend.PathStat{}, err
	}
	fi := c.fs.info(rp, n)
	st := backend.PathStat{Name: fi.name, Size: fi.size, Mode: n.mode}
	if n.mode&fs.ModeSymlink != 0 {
		c.fs.mu.Lock()
		st.LinkTarget, _ = c.fs.resolve(rp, false)
		c.fs.mu.Unlock()
	}
	return st, nil
}

// RunHelper runs a helper container with a fresh, empty workspace, hands
// spec.Collect over on success and removes the helper.
func (b *Backend) RunHelper(ctx context.Context, containerID string, spec backend.HelperSpec) (backend.ExecStatus, error) {
	if err := b.enter(ctx, OpRunHelper); err != nil {
		return backend.ExecStatus{}, err
	}
	if _, err := b.get(containerID); err != nil {
		return backend.ExecStatus{}, err
	}
	b.mu.Lock()
	if _, ok := b.images[spec.Image]; !ok {
		b.mu.Unlock()
		return backend.ExecStatus{}, fmt.Errorf("%w: %s", backend.ErrImageNotFound, spec.Image)
	}
	uid, gid := parseUser(spec.User)
	h := b.newContainerLocked(backend.ContainerSpec{
		Name: "mcp-sandbox-helper-" + strconv.Itoa(b.next+1), Image: spec.Image, Labels: spec.Labels, Env: spec.Env,
		User: spec.User, Network: spec.Network, MemoryBytes: spec.MemoryBytes, NanoCPUs: spec.NanoCPUs, Pids: spec.Pids,
		Runtime: spec.Runtime,
	}, uid, gid)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.removeLocked(h.id)
		b.mu.Unlock()
	}()
	if spec.Started != nil {
		stop, err := spec.Started(ctx, h.id)
		if err != nil {
			return backend.ExecStatus{}, err
		}
		defer stop()
	}
	n := <-b.start(ctx, h, backend.ExecSpec{Cmd: spec.Cmd, Stdout: spec.Stdout, Stderr: spec.Stderr}, nil)
	if n < 0 {
		return backend.ExecStatus{ExitCode: 137, Killed: ctx.Err() != nil}, errors.Join(ctx.Err(), errors.New("helper stopped"))
	}
	if n == 0 && spec.Collect != "" && spec.Into != nil {
		buf, err := tarOf(h.fs, path.Join(backend.Workspace, spec.Collect))
		if err != nil {
			return backend.ExecStatus{ExitCode: n}, fmt.Errorf("collect %s: %w", spec.Collect, err)
		}
		if err := spec.Into(buf); err != nil {
			return backend.ExecStatus{ExitCode: n}, err
		}
	}
	return backend.ExecStatus{ExitCode: n}, nil
}

// WaitExit waits for a container to stop.
func (b *Backend) WaitExit(ctx context.Context, containerID string) (backend.ContainerExit, error) {
	if err := b.enter(ctx, OpWaitExit); err != nil {
		return backend.ContainerExit{}, err
	}
	b.mu.Lock()
	c := b.containers[containerID]
	b.mu.Unlock()
	if c == nil {
		return backend.ContainerExit{Removed: true}, nil
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return backend.ContainerExit{}, ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.containers[containerID] == nil {
		return backend.ContainerExit{Removed: true}, nil
	}
	return c.exit, nil
}

// RemoveOrphanVolumes removes the unused volumes orphan picks.
func (b *Backend) RemoveOrphanVolumes(ctx context.Context, orphan func(backend.VolumeInfo) bool) ([]string, error) {
	if err := b.enter(ctx, OpVolumes); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var removed []string
	for name, v := range b.volumes {
		if v.usedBy != "" && b.containers[v.usedBy] != nil {
			continue
		}
		if orphan(backend.VolumeInfo{Name: name, Labels: maps.Clone(v.labels), Created: v.created}) {
			delete(b.volumes, name)
			removed = append(removed, name)
		}
	}
	slices.Sort(removed)
	return removed, nil
}

// NoKernel declares that this backend runs no real kernel (see
// backendtest.NoKernel).
func (b *Backend) NoKernel() {}

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Attacher  = (*Backend)(nil)
	_ backend.Inspector = (*Backend)(nil)
)
