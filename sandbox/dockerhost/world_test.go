package dockerhost

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// world is a temporary machine: a root for system-wide paths, a home, a
// runtime directory, and an environment.
type world struct {
	t                    *testing.T
	dir, root, home, run string
	env                  map[string]string
}

func newWorld(t *testing.T) *world {
	dir := t.TempDir()
	w := &world{
		t:    t,
		dir:  dir,
		root: filepath.Join(dir, "root"),
		home: filepath.Join(dir, "home"),
		run:  filepath.Join(dir, "run"),
	}
	w.env = map[string]string{"XDG_RUNTIME_DIR": w.run}
	return w
}

func (w *world) options() Options {
	return Options{
		Getenv:  func(k string) string { return w.env[k] },
		Home:    w.home,
		GOOS:    "linux",
		UID:     "4242",
		Root:    w.root,
		Timeout: 2 * time.Second,
	}
}

func (w *world) detect() *Result {
	return Detect(context.Background(), w.options())
}

// places are where the fakes go, by name, and what each says about itself.
var places = map[string]struct {
	path   func(*world) string
	engine fakeEngine
}{
	"default":     {func(w *world) string { return filepath.Join(w.root, "var/run/docker.sock") }, fakeDocker},
	"desktop":     {func(w *world) string { return filepath.Join(w.home, ".docker/desktop/docker.sock") }, fakeDockerDesktop},
	"orbstack":    {func(w *world) string { return filepath.Join(w.home, ".orbstack/run/docker.sock") }, fakeOrbStack},
	"colima":      {func(w *world) string { return filepath.Join(w.home, ".colima/default/docker.sock") }, fakeColima},
	"colima-work": {func(w *world) string { return filepath.Join(w.home, ".colima/work/docker.sock") }, fakeColimaWork},
	"rancher":     {func(w *world) string { return filepath.Join(w.home, ".rd/docker.sock") }, fakeRancher},
	"rootless":    {func(w *world) string { return filepath.Join(w.run, "docker.sock") }, fakeRootless},
	"podman":      {func(w *world) string { return filepath.Join(w.run, "podman/podman.sock") }, fakePodman},
}

func (w *world) place(names ...string) {
	for _, n := range names {
		p, ok := places[n]
		if !ok {
			w.t.Fatalf("no place %q", n)
		}
		serveFake(w.t, p.path(w), p.engine)
	}
}

func (w *world) stale(names ...string) {
	for _, n := range names {
		staleSocket(w.t, places[n].path(w))
	}
}

// row is the part of a Candidate the tests compare, with the temporary
// directory written as $T.
type row struct {
	Source, Host string
	Explicit     bool
	OK, Missing  bool
	Engine       string
}

func (w *world) rows(r *Result) []row {
	var out []row
	for _, c := range r.Candidates {
		out = append(out, row{
			Source: c.Source, Host: strings.ReplaceAll(c.Host, w.dir, "$T"),
			Explicit: c.Explicit, OK: c.OK, Missing: c.Missing, Engine: c.Engine,
		})
	}
	return out
}
