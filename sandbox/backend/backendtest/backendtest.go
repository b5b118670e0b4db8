package backendtest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Options says what the suite runs on.
type Options struct {
	// Image is a present image with a POSIX shell and the usual tools.
	Image string
	// Runtime is ContainerSpec.Runtime for every container ("" for the
	// engine's default).
	Runtime string
	// User is the sandbox user ("uid:gid"); default 1000:1000.
	User string

	// What the backend does not offer, each checked as refused rather
	// than skipped (the zero Options, for Docker, require all of it):

	// NoHelpers: RunHelper refuses with an error (package installs are
	// not available on the backend) and starts nothing.
	NoHelpers bool
}

// timeout bounds each backend call the suite makes; nothing is timed.
const timeout = 2 * time.Minute

// Run runs the conformance suite against the backends newBackend returns
// (called once per test; the suite does not close them).
func Run(t *testing.T, newBackend func(t *testing.T) backend.Backend, opts Options) {
	if opts.User == "" {
		opts.User = "1000:1000"
	}
	s := &suite{opts: opts, owner: "backendtest-" + randomHex(4)}
	t.Run("ImagePresent", func(t *testing.T) { s.imagePresent(t, newBackend(t)) })
	t.Run("ImageMissing", func(t *testing.T) { s.imageMissing(t, newBackend(t)) })

	// One running container for the tests that only look inside it.
	be := newBackend(t)
	id, name := s.create(t, be, nil)
	t.Run("Exec", func(t *testing.T) { s.exec(t, be, id) })
	t.Run("ExecStdin", func(t *testing.T) { s.execStdin(t, be, id) })
	t.Run("ExecEnvAndWorkDir", func(t *testing.T) { s.execEnv(t, be, id) })
	t.Run("ExecHardened", func(t *testing.T) { s.execHardened(t, be, id) })
	t.Run("ExecKillsTree", func(t *testing.T) { s.execKillsTree(t, be, id) })
	t.Run("Attach", func(t *testing.T) { s.attach(t, be, id) })
	t.Run("CopyRoundTrip", func(t *testing.T) { s.copyRoundTrip(t, be, id) })
	t.Run("CopyFromPassesLinksThrough", func(t *testing.T) { s.copyFromLinks(t, be, id) })
	t.Run("CopyToHostileArchive", func(t *testing.T) { s.copyToHostile(t, be, id) })
	t.Run("StatPath", func(t *testing.T) { s.statPath(t, be, id) })
	t.Run("Usage", func(t *testing.T) { s.usage(t, be, id) })
	t.Run("ListByLabels", func(t *testing.T) { s.list(t, be, id, name) })
	t.Run("Inspect", func(t *testing.T) { s.inspect(t, be, id) })
	t.Run("Helper", func(t *testing.T) { s.helper(t, be, id) })
	t.Run("Rename", func(t *testing.T) { s.rename(t, newBackend(t)) })
	t.Run("RemoveAndGone", func(t *testing.T) { s.remove(t, newBackend(t)) })
	t.Run("WaitExit", func(t *testing.T) { s.waitExit(t, newBackend(t)) })
	t.Run("RemoveOrphanVolumesKeepsUsed", func(t *testing.T) { s.orphanVolumes(t, newBackend(t)) })
}

// NoKernel is implemented by backends that run no real kernel (an
// in-memory test double such as sandbox/backend/fake). The suite then
// skips the checks only a kernel can answer — which of a killed tree's
// processes /proc still shows — and runs every other one, the kill
// itself included.
type NoKernel interface{ NoKernel() }

func noKernel(be backend.Backend) bool {
	_, ok := be.(NoKernel)
	return ok
}

type suite struct {
	opts  Options
	owner string
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return ctx
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *suite) labels(id string) map[string]string {
	host, _ := os.Hostname()
	return map[string]string{
		backend.LabelManaged:   "true",
		backend.LabelID:        id,
		backend.LabelOwner:     s.owner,
		backend.LabelOwnerPID:  strconv.Itoa(os.Getpid()),
		backend.LabelOwnerHost: host,
	}
}

func (s *suite) spec(id string) backend.ContainerSpec {
	return backend.ContainerSpec{
		Name: backend.NamePrefix + id, Image: s.opts.Image, Labels: s.labels(id),
		Env: []string{"HOME=" + backend.Workspace, "PATH=/usr/local/bin:/usr/bin:/bin"}, User: s.opts.User,
		Network: "none", MemoryBytes: 256 << 20, NanoCPUs: 1e9, Pids: 256,
		WorkspaceMB: 64, TmpMB: 64, Runtime: s.opts.Runtime,
	}
}

// create makes and starts a container, removed when t ends.
func (s *suite) create(t *testing.T, be backend.Backend, edit func(*backend.ContainerSpec)) (id, name string) {
	t.Helper()
	sid := "bt" + randomHex(5)
	spec := s.spec(sid)
	if edit != nil {
		edit(&spec)
	}
	id, err := be.Create(ctxT(t), spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if id == "" {
		t.Fatal("Create returned an empty id")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := be.Remove(ctx, id); err != nil {
			t.Errorf("Remove at cleanup: %v", err)
		}
	})
	return id, spec.Name
}

// run execs argv and returns its status and output; a backend error fails t.
func run(t *testing.T, be backend.Backend, id string, spec backend.ExecSpec) (backend.ExecStatus, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	spec.Stdout, spec.Stderr = &out, &errb
	st, err := be.Exec(ctxT(t), id, spec)
	if err != nil {
		t.Fatalf("Exec %q: %v (stdout %q, stderr %q)", spec.Cmd, err, out.String(), errb.String())
	}
	return st, out.String(), errb.String()
}

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

func (s *suite) imagePresent(t *testing.T, be backend.Backend) {
	info, err := be.EnsureImage(ctxT(t), s.opts.Image, "never", nil)
	if err != nil {
		t.Fatalf("EnsureImage(present, never): %v", err)
	}
	if info.ID == "" || info.Pulled {
		t.Errorf("EnsureImage(present) = %+v, want an id and Pulled false", info)
	}
}

func (s *suite) imageMissing(t *testing.T, be backend.Backend) {
	_, err := be.EnsureImage(ctxT(t), "mcp-sandbox-test/absent-"+randomHex(4)+":0", "never", nil)
	if !errors.Is(err, backend.ErrImageNotFound) {
		t.Errorf("EnsureImage(missing, never) = %v, want ErrImageNotFound", err)
	}
}

func (s *suite) exec(t *testing.T, be backend.Backend, id string) {
	st, out, errs := run(t, be, id, backend.ExecSpec{Cmd: sh("echo out; echo err >&2; exit 3")})
	if st.ExitCode != 3 || st.Killed || out != "out\n" || errs != "err\n" {
		t.Errorf("exec = %+v, stdout %q, stderr %q; want exit 3, out\\n, err\\n", st, out, errs)
	}
	st, out, _ = run(t, be, id, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", `printf '%s|' "$@"`, "x", "a b", "", "$HOME"}})
	if st.ExitCode != 0 || out != "a b||$HOME|" {
		t.Errorf("argv passed as %q, want a b||$HOME| (no shell splitting)", out)
	}
	if _, err := be.Exec(ctxT(t), id, backend.ExecSpec{}); err == nil {
		t.Error("Exec with an empty command succeeded")
	}
}

func (s *suite) execStdin(t *testing.T, be backend.Backend, id string) {
	in := strings.Repeat("line of stdin\n", 5000)
	st, out, _ := run(t, be, id, backend.ExecSpec{Cmd: []string{"cat"}, Stdin: strings.NewReader(in)})
	if st.ExitCode != 0 || out != in {
		t.Errorf("cat of %d bytes of stdin: exit %d, %d bytes back", len(in), st.ExitCode, len(out))
	}
}

func (s *suite) execEnv(t *testing.T, be backend.Backend, id string) {
	st, out, _ := run(t, be, id, backend.ExecSpec{Cmd: sh(`echo "$FOO"; pwd`), Env: []string{"FOO=bar baz"}})
	if st.ExitCode != 0 || out != "bar baz\n"+backend.Workspace+"\n" {
		t.Errorf("env and default workdir: %q, want FOO and %s", out, backend.Workspace)
	}
	st, out, _ = run(t, be, id, backend.ExecSpec{Cmd: []string{"pwd"}, WorkDir: "/tmp"})
	if st.ExitCode != 0 || out != "/tmp\n" {
		t.Errorf("WorkDir /tmp: %q", out)
	}
}

func (s *suite) execHardened(t *testing.T, be backend.Backend, id string) {
	uid, gid, _ := strings.Cut(s.opts.User, ":")
	st, out, _ := run(t, be, id, backend.ExecSpec{Cmd: sh(`id -u; id -g; touch /rootfs-probe 2>/dev/null && echo root-writable; touch ` + backend.Workspace + `/w && echo ws-ok; touch /tmp/t && echo tmp-ok`)})
	want := uid + "\n" + gid + "\nws-ok\ntmp-ok\n"
	if st.ExitCode != 0 || out != want {
		t.Errorf("user and writable places: %q, want %q (the sandbox user; only %s and /tmp writable)", out, want, backend.Workspace)
	}
}

// signalWriter is a buffer that closes seen when marker first appears.
type signalWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	seen   chan struct{}
	once   sync.Once
}

func newSignalWriter(marker string) *signalWriter {
	return &signalWriter{marker: marker, seen: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// alive lists which of the pids in file /tmp/NAME still run (zombies do
// not count), waiting for the container's init to reap them.
func alive(t *testing.T, be backend.Backend, id, file string) string {
	t.Helper()
	script := `for i in $(seq 1 100); do a=; for p in $(cat ` + file + `); do s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ] && a="$a $p"; done; [ -z "$a" ] && exit 0; sleep 0.1; done; echo $a`
	_, out, _ := run(t, be, id, backend.ExecSpec{Cmd: sh(script)})
	return strings.TrimSpace(out)
}

func (s *suite) execKillsTree(t *testing.T, be backend.Backend, id string) {
	// A process that starts others, one of them in a new session and
	// ignoring SIGTERM and SIGHUP, then waits.
	script := `f=/tmp/pids-$1; : > $f; sleep 1000 & echo $! >> $f; (trap '' TERM HUP; setsid sleep 1000 & echo $! >> $f; sleep 1000) & echo $! >> $f; echo started; wait`
	w := newSignalWriter("started")
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan struct{})
	var st backend.ExecStatus
	var err error
	go func() {
		defer close(done)
		st, err = be.Exec(ctx, id, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", script, "sh", "a"}, Stdout: w})
	}()
	select {
	case <-w.seen:
	case <-done:
		t.Fatalf("the process ended before it was killed: %+v, %v, %q", st, err, w.String())
	}
	cancel()
	<-done
	if !errors.Is(err, context.Canceled) || !st.Killed {
		t.Errorf("Exec after cancel = %+v, %v; want Killed and context.Canceled", st, err)
	}
	if noKernel(be) {
		return
	}
	if a := alive(t, be, id, "/tmp/pids-a"); a != "" {
		t.Errorf("processes still running after the kill: %s", a)
	}
}

func (s *suite) attach(t *testing.T, be backend.Backend, id string) {
	at, ok := be.(backend.Attacher)
	if !ok {
		t.Skip("the backend is no Attacher (optional)")
	}
	out := newSignalWriter("got ping\nmore\n")
	p, err := at.Attach(ctxT(t), id, backend.ExecSpec{Cmd: sh(`read l; echo "got $l"; cat`), Stdout: out, Stderr: io.Discard})
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	if pid := p.PID(ctxT(t)); pid <= 1 {
		t.Errorf("PID = %d, want the process's id", pid)
	}
	if _, err := io.WriteString(p, "ping\nmore\n"); err != nil {
		t.Fatalf("write to the process: %v", err)
	}
	<-out.seen
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	<-p.Done()
	st, err := p.Wait(ctxT(t))
	if err != nil || st.ExitCode != 0 {
		t.Errorf("Wait after stdin closed = %+v, %v", st, err)
	}
	if got := out.String(); got != "got ping\nmore\n" {
		t.Errorf("output %q, want the lines written back", got)
	}

	// Kill ends the process and what it started.
	out = newSignalWriter("started")
	p, err = at.Attach(ctxT(t), id, backend.ExecSpec{Cmd: sh(`: > /tmp/pids-at; sleep 1000 & echo $! >> /tmp/pids-at; echo started; wait`), Stdout: out, Stderr: io.Discard})
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	<-out.seen
	if err := p.Kill(ctxT(t)); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	<-p.Done()
	if _, err := p.Wait(ctxT(t)); err != nil {
		t.Errorf("Wait after Kill: %v", err)
	}
	_ = p.Close()
	if noKernel(be) {
		return
	}
	if a := alive(t, be, id, "/tmp/pids-at"); a != "" {
		t.Errorf("processes still running after Kill: %s", a)
	}
}

// tarEntry is one entry of a test archive.
type tarEntry struct {
	name, body, link string
	typ              byte
	mode             int64
}

func (s *suite) makeTar(t *testing.T, entries ...tarEntry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	uid, gid, _ := strings.Cut(s.opts.User, ":")
	u, _ := strconv.Atoi(uid)
	g, _ := strconv.Atoi(gid)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode, Uid: u, Gid: g, ModTime: time.Now()}
		if h.Mode == 0 {
			h.Mode = 0o644
			if e.typ == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// readTar returns an archive's entries by name.
func readTar(t *testing.T, r io.Reader) map[string]tarEntry {
	t.Helper()
	out := map[string]tarEntry{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("reading the archive: %v", err)
		}
		b, _ := io.ReadAll(tr)
		out[strings.TrimSuffix(h.Name, "/")] = tarEntry{name: h.Name, body: string(b), link: h.Linkname, typ: h.Typeflag, mode: h.Mode}
	}
}

func (s *suite) copyRoundTrip(t *testing.T, be backend.Backend, id string) {
	in := s.makeTar(t,
		tarEntry{name: "rt/", typ: tar.TypeDir},
		tarEntry{name: "rt/a.txt", typ: tar.TypeReg, body: "alpha\n"},
		tarEntry{name: "rt/sub/", typ: tar.TypeDir},
		tarEntry{name: "rt/sub/b.bin", typ: tar.TypeReg, body: "\x00\x01\xff", mode: 0o600},
	)
	if err := be.CopyTo(ctxT(t), id, backend.Workspace, in); err != nil {
		t.Fatalf("CopyTo: %v", err)
	}
	_, out, _ := run(t, be, id, backend.ExecSpec{Cmd: sh(`cat rt/a.txt; stat -c '%a %s' rt/sub/b.bin`)})
	if out != "alpha\n600 3\n" {
		t.Errorf("after CopyTo: %q", out)
	}
	rc, err := be.CopyFrom(ctxT(t), id, backend.Workspace+"/rt")
	if err != nil {
		t.Fatalf("CopyFrom: %v", err)
	}
	defer rc.Close()
	got := readTar(t, rc)
	if got["rt/a.txt"].body != "alpha\n" || got["rt/sub/b.bin"].body != "\x00\x01\xff" || got["rt/sub"].typ != tar.TypeDir {
		t.Errorf("CopyFrom entries: %+v (named from the base name down)", got)
	}
	if _, err := be.CopyFrom(ctxT(t), id, backend.Workspace+"/absent-"+randomHex(3)); err == nil {
		t.Error("CopyFrom of a missing path succeeded")
	}
}

// copyFromLinks: what the sandbox made comes out as it is — links as
// links, never followed to what they name.
func (s *suite) copyFromLinks(t *testing.T, be backend.Backend, id string) {
	run(t, be, id, backend.ExecSpec{Cmd: sh(`mkdir -p hl && cd hl && ln -sf /etc/passwd abs && ln -sf ../../../../../../etc/shadow rel && printf x > f && ln -f f hard`)})
	rc, err := be.CopyFrom(ctxT(t), id, backend.Workspace+"/hl")
	if err != nil {
		t.Fatalf("CopyFrom: %v", err)
	}
	defer rc.Close()
	got := readTar(t, rc)
	if e := got["hl/abs"]; e.typ != tar.TypeSymlink || e.link != "/etc/passwd" || e.body != "" {
		t.Errorf("absolute symlink came out as %+v, want the link itself", e)
	}
	if e := got["hl/rel"]; e.typ != tar.TypeSymlink || e.link != "../../../../../../etc/shadow" {
		t.Errorf("escaping symlink came out as %+v, want the link itself", e)
	}
	f, h := got["hl/f"], got["hl/hard"]
	if !(f.body == "x" && h.typ == tar.TypeLink) && !(h.body == "x" && f.typ == tar.TypeLink) && !(f.body == "x" && h.body == "x") {
		t.Errorf("hard link pair came out as %+v and %+v", f, h)
	}
}

// copyToHostile: an archive whose entries reach out of the target
// directory is refused, or written inside the container only; nothing
// lands outside the target on the host or in the container's /etc.
func (s *suite) copyToHostile(t *testing.T, be backend.Backend, id string) {
	mark := "escape-" + randomHex(4)
	hostDir := t.TempDir()
	cases := []struct {
		name    string
		entries []tarEntry
	}{
		{"dotdot", []tarEntry{{name: "../../../../../../../tmp/" + mark, typ: tar.TypeReg, body: "dotdot"}}},
		{"absolute", []tarEntry{{name: "/tmp/" + mark + "-abs", typ: tar.TypeReg, body: "abs"}}},
		{"symlink then write through it", []tarEntry{
			{name: "ln-" + mark, typ: tar.TypeSymlink, link: hostDir},
			{name: "ln-" + mark + "/pwned", typ: tar.TypeReg, body: "through link"},
		}},
		{"hardlink to outside", []tarEntry{{name: "hard-" + mark, typ: tar.TypeLink, link: "../../../../etc/passwd"}}},
	}
	for _, c := range cases {
		err := be.CopyTo(ctxT(t), id, backend.Workspace+"/", s.makeTar(t, c.entries...))
		t.Logf("%s: CopyTo returned %v", c.name, err)
	}
	if ents, _ := os.ReadDir(hostDir); len(ents) != 0 {
		t.Errorf("a hostile archive wrote on the host: %v", ents)
	}
	if _, err := os.Stat("/tmp/" + mark); err == nil {
		t.Errorf("a hostile archive wrote /tmp/%s on the host", mark)
	}
	_, out, _ := run(t, be, id, backend.ExecSpec{Cmd: sh(`cat /etc/passwd | head -c 0; ls / ` + path.Dir(backend.Workspace) + ` 2>/dev/null | grep ` + mark + `; ls -l ` + backend.Workspace + `/hard-` + mark + ` 2>/dev/null | grep -v '^-.* 1 ' ; true`)})
	if strings.TrimSpace(out) != "" {
		t.Errorf("a hostile archive left entries outside the target in the container: %q", out)
	}
}

func (s *suite) statPath(t *testing.T, be backend.Backend, id string) {
	run(t, be, id, backend.ExecSpec{Cmd: sh(`mkdir -p st/d && printf 12345 > st/f && ln -sf f st/l`)})
	ws := backend.Workspace + "/st"
	f, err := be.StatPath(ctxT(t), id, ws+"/f")
	if err != nil || f.Size != 5 || !f.Mode.IsRegular() || f.Name != "f" {
		t.Errorf("StatPath(file) = %+v, %v", f, err)
	}
	d, err := be.StatPath(ctxT(t), id, ws+"/d")
	if err != nil || !d.Mode.IsDir() {
		t.Errorf("StatPath(dir) = %+v, %v", d, err)
	}
	l, err := be.StatPath(ctxT(t), id, ws+"/l")
	if err != nil || l.Mode&fs.ModeSymlink == 0 || l.LinkTarget != ws+"/f" {
		t.Errorf("StatPath(symlink) = %+v, %v; want the link itself, resolving to %s/f", l, err, ws)
	}
	if _, err := be.StatPath(ctxT(t), id, ws+"/absent"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("StatPath(missing) = %v, want fs.ErrNotExist", err)
	}
}

func (s *suite) usage(t *testing.T, be backend.Backend, id string) {
	u, err := be.Usage(ctxT(t), id)
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	if u.MemoryBytes == 0 || u.Pids == 0 || u.CPUPercent < 0 {
		t.Errorf("Usage = %+v, want memory and pids in use", u)
	}
	if u.MemoryLimit != 0 && u.MemoryLimit != 256<<20 {
		t.Errorf("Usage.MemoryLimit = %d, want the container's limit %d", u.MemoryLimit, 256<<20)
	}
}

func (s *suite) find(t *testing.T, be backend.Backend, id string) (backend.ContainerInfo, bool) {
	t.Helper()
	list, err := be.List(ctxT(t))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	i := slices.IndexFunc(list, func(c backend.ContainerInfo) bool { return c.ID == id })
	if i < 0 {
		return backend.ContainerInfo{}, false
	}
	return list[i], true
}

func (s *suite) list(t *testing.T, be backend.Backend, id, name string) {
	c, ok := s.find(t, be, id)
	if !ok {
		t.Fatalf("List does not have container %s", id)
	}
	if strings.TrimPrefix(c.Name, "/") != name || c.State != "running" || c.Image == "" || c.Created.IsZero() {
		t.Errorf("List entry %+v, want name %s, running, image and creation time", c, name)
	}
	for k, v := range s.labels(c.Labels[backend.LabelID]) {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	// List may leave the limits out (Inspect has them); if it gives
	// them, they are right.
	if c.MemoryBytes != 0 && (c.MemoryBytes != 256<<20 || c.NanoCPUs != 1e9 || c.Pids < 256) {
		t.Errorf("List limits %d/%d/%d, want 256 MiB, 1 CPU, at least 256 pids", c.MemoryBytes, c.NanoCPUs, c.Pids)
	}
}

func (s *suite) inspect(t *testing.T, be backend.Backend, id string) {
	in, ok := be.(backend.Inspector)
	if !ok {
		t.Skip("the backend is no Inspector (optional)")
	}
	c, err := in.Inspect(ctxT(t), id)
	// The pids limit may have room added for the runtime's own threads
	// (gVisor's).
	if err != nil || c.MemoryBytes != 256<<20 || c.NanoCPUs != 1e9 || c.Pids < 256 || c.Network != "none" {
		t.Errorf("Inspect = %+v, %v", c, err)
	}
	if _, err := in.Inspect(ctxT(t), "absent"+randomHex(6)); err == nil {
		t.Error("Inspect of a missing container succeeded")
	}
}

func (s *suite) helper(t *testing.T, be backend.Backend, id string) {
	sid := "bth" + randomHex(4)
	labels := s.labels(sid)
	labels[backend.LabelHelper] = sid
	if s.opts.NoHelpers {
		s.noHelper(t, be, id, labels)
		return
	}
	var out bytes.Buffer
	var got map[string]tarEntry
	var started []string // what Started saw, and when its stop ran
	st, err := be.RunHelper(ctxT(t), id, backend.HelperSpec{
		Image: s.opts.Image, User: s.opts.User, Network: "none", MemoryBytes: 128 << 20, NanoCPUs: 1e9, Pids: 64,
		Labels: labels, Stdout: &out, Stderr: io.Discard, WorkspaceMB: 16,
		Started: func(ctx context.Context, helperID string) (func(), error) {
			// The helper runs: it can be exec'd into, before Cmd.
			var mark bytes.Buffer
			st, err := be.Exec(ctx, helperID, backend.ExecSpec{Cmd: sh(`echo running`), User: s.opts.User, Stdout: &mark})
			started = append(started, fmt.Sprintf("exec %d %v %q", st.ExitCode, err, mark.String()))
			return func() { started = append(started, "stopped") }, nil
		},
		Cmd:     sh(`ls -A; mkdir -p out/d && printf made > out/d/f && echo done`),
		Collect: "out",
		Into: func(r io.Reader) error {
			got = readTar(t, r)
			return nil
		},
	})
	if err != nil || st.ExitCode != 0 {
		t.Fatalf("RunHelper = %+v, %v (%q)", st, err, out.String())
	}
	if out.String() != "done\n" {
		t.Errorf("helper output %q, want only done (a fresh, empty workspace)", out.String())
	}
	if got["out/d/f"].body != "made" {
		t.Errorf("collected %+v, want out/d/f", got)
	}
	if want := []string{`exec 0 <nil> "running\n"`, "stopped"}; !slices.Equal(started, want) {
		t.Errorf("Started: %q, want %q (called once the helper runs, its stop after Cmd)", started, want)
	}
	list, err := be.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.Labels[backend.LabelHelper] == sid {
			t.Errorf("helper %s still there after RunHelper returned", c.Name)
		}
	}
	// A failing helper hands nothing over.
	called := false
	st, err = be.RunHelper(ctxT(t), id, backend.HelperSpec{
		Image: s.opts.Image, User: s.opts.User, Network: "none", MemoryBytes: 128 << 20, NanoCPUs: 1e9, Pids: 64,
		Labels: labels, WorkspaceMB: 16, Cmd: sh(`mkdir out; exit 7`), Collect: "out",
		Into: func(io.Reader) error { called = true; return nil },
	})
	if err != nil || st.ExitCode != 7 || called {
		t.Errorf("failing helper = %+v, %v, Into called %v; want exit 7 and no hand-over", st, err, called)
	}
}

// noHelper: a backend without helpers refuses RunHelper, hands nothing
// over and leaves no helper behind.
func (s *suite) noHelper(t *testing.T, be backend.Backend, id string, labels map[string]string) {
	called := false
	_, err := be.RunHelper(ctxT(t), id, backend.HelperSpec{
		Image: s.opts.Image, User: s.opts.User, Network: "none", MemoryBytes: 128 << 20, NanoCPUs: 1e9, Pids: 64,
		Labels: labels, WorkspaceMB: 16, Cmd: sh(`mkdir out`), Collect: "out",
		Into: func(io.Reader) error { called = true; return nil },
	})
	if err == nil || called {
		t.Errorf("RunHelper on a backend without helpers = %v, Into called %v; want an error and no hand-over", err, called)
	}
	list, err := be.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.Labels[backend.LabelHelper] == labels[backend.LabelHelper] {
			t.Errorf("helper %s made by a backend without helpers", c.Name)
		}
	}
}

func (s *suite) rename(t *testing.T, be backend.Backend) {
	id, _ := s.create(t, be, nil)
	name := backend.NamePrefix + "btr" + randomHex(4)
	if err := be.Rename(ctxT(t), id, name); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	c, ok := s.find(t, be, id)
	if !ok || strings.TrimPrefix(c.Name, "/") != name {
		t.Errorf("after Rename, List has %+v (found %v), want name %s", c, ok, name)
	}
}

func (s *suite) remove(t *testing.T, be backend.Backend) {
	id, _ := s.create(t, be, nil)
	run(t, be, id, backend.ExecSpec{Cmd: sh(`sleep 1000 & echo x > keep`)})
	if err := be.Remove(ctxT(t), id); err != nil {
		t.Fatalf("Remove of a running container: %v", err)
	}
	if _, ok := s.find(t, be, id); ok {
		t.Error("List still has the removed container")
	}
	if err := be.Remove(ctxT(t), id); err != nil {
		t.Errorf("Remove of what is already gone: %v", err)
	}
	if err := be.Remove(ctxT(t), "absent"+randomHex(6)); err != nil {
		t.Errorf("Remove of an id that never existed: %v", err)
	}
	if _, err := be.Exec(ctxT(t), id, backend.ExecSpec{Cmd: []string{"true"}}); err == nil {
		t.Error("Exec in a removed container succeeded")
	}
	ex, err := be.WaitExit(ctxT(t), id)
	if err != nil || !ex.Removed {
		t.Errorf("WaitExit of a removed container = %+v, %v; want Removed", ex, err)
	}
}

func (s *suite) waitExit(t *testing.T, be backend.Backend) {
	id, _ := s.create(t, be, nil)
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	if _, err := be.WaitExit(ctx, id); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitExit with an ended ctx on a running container = %v, want context.Canceled", err)
	}
}

func (s *suite) orphanVolumes(t *testing.T, be backend.Backend) {
	id, _ := s.create(t, be, nil)
	run(t, be, id, backend.ExecSpec{Cmd: sh(`echo kept > ` + backend.Workspace + `/v`)})
	removed, err := be.RemoveOrphanVolumes(ctxT(t), func(v backend.VolumeInfo) bool {
		return v.Labels[backend.LabelOwner] == s.owner
	})
	if err != nil {
		t.Fatalf("RemoveOrphanVolumes: %v", err)
	}
	_, out, _ := run(t, be, id, backend.ExecSpec{Cmd: []string{"cat", backend.Workspace + "/v"}})
	if out != "kept\n" {
		t.Errorf("a used workspace lost its file after RemoveOrphanVolumes removed %v: %q", removed, out)
	}
}
