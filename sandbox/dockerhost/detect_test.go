package dockerhost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDetectKnownPlaces(t *testing.T) {
	w := newWorld(t)
	w.place("default", "desktop", "orbstack", "colima", "colima-work", "rancher", "rootless", "podman")
	staleSocket(t, filepath.Join(w.home, ".colima/_lima/colima/ssh.sock")) // Colima's own, not a profile

	start := time.Now()
	r := w.detect()
	t.Logf("detect took %s", time.Since(start))

	want := []row{
		{Source: "default socket", Host: "unix://$T/root/var/run/docker.sock", OK: true, Engine: "Docker Engine"},
		{Source: "Docker Desktop", Host: "unix://$T/home/.docker/desktop/docker.sock", OK: true, Engine: "Docker Desktop"},
		{Source: "OrbStack", Host: "unix://$T/home/.orbstack/run/docker.sock", OK: true, Engine: "OrbStack"},
		{Source: "Colima (profile default)", Host: "unix://$T/home/.colima/default/docker.sock", OK: true, Engine: "Colima"},
		{Source: "Colima (profile work)", Host: "unix://$T/home/.colima/work/docker.sock", OK: true, Engine: "Colima"},
		{Source: "Rancher Desktop", Host: "unix://$T/home/.rd/docker.sock", OK: true, Engine: "Rancher Desktop"},
		{Source: "rootless Docker", Host: "unix://$T/run/docker.sock", OK: true, Engine: "Docker Engine"},
		{Source: "rootless Docker", Host: "unix://$T/root/run/user/4242/docker.sock", Missing: true},
		{Source: "Podman (rootful)", Host: "unix://$T/root/run/podman/podman.sock", Missing: true},
		{Source: "Podman (rootless)", Host: "unix://$T/run/podman/podman.sock", OK: true, Engine: "Podman"},
		{Source: "Podman (rootless)", Host: "unix://$T/root/run/user/4242/podman/podman.sock", Missing: true},
	}
	if diff := cmp.Diff(want, w.rows(r)); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	if r.Chosen == nil || r.Chosen.Source != "default socket" {
		t.Fatalf("chosen = %+v, want the default socket", r.Chosen)
	}
	got := *r.Chosen
	got.Host = ""
	if diff := cmp.Diff(Candidate{Source: "default socket", OK: true, Engine: "Docker Engine", Version: "28.5.2", OS: "linux/amd64", APIVersion: "1.45"}, got, cmp.AllowUnexported(Candidate{})); diff != "" {
		t.Errorf("chosen (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.Reason, "first known place that answered") || !strings.Contains(r.Reason, "also answering: Docker Desktop, OrbStack") {
		t.Errorf("reason = %q", r.Reason)
	}
	if r.Hint != "" {
		t.Errorf("hint = %q, want none when an engine answered", r.Hint)
	}
	for _, c := range r.Candidates {
		if c.Missing && !strings.HasPrefix(c.Error, "no socket at ") {
			t.Errorf("%s: missing with error %q", c.Host, c.Error)
		}
	}
}

func TestDetectChoice(t *testing.T) {
	tests := []struct {
		name       string
		place      []string
		stale      []string
		env        map[string]string
		wantChosen string // Source; "" for none
		wantEngine string
		wantReason []string
		wantHint   []string
	}{
		{
			name:       "colima profiles",
			place:      []string{"colima-work", "colima"},
			wantChosen: "Colima (profile default)",
			wantEngine: "Colima",
			wantReason: []string{"neither docker.host, DOCKER_HOST nor a docker context is set", "also answering: Colima (profile work)"},
		},
		{
			name:       "docker desktop over colima",
			place:      []string{"colima", "desktop"},
			wantChosen: "Docker Desktop",
			wantEngine: "Docker Desktop",
		},
		{
			name:       "podman rootless only",
			place:      []string{"podman"},
			wantChosen: "Podman (rootless)",
			wantEngine: "Podman",
		},
		{
			name:       "rootless docker over podman",
			place:      []string{"podman", "rootless"},
			wantChosen: "rootless Docker",
			wantEngine: "Docker Engine",
		},
		{
			name:       "stale desktop socket, rancher answers",
			place:      []string{"rancher"},
			stale:      []string{"desktop"},
			wantChosen: "Rancher Desktop",
			wantEngine: "Rancher Desktop",
		},
		{
			name:       "nothing",
			wantReason: []string{"no known place answered"},
			wantHint:   []string{"sudo systemctl start docker", "Tried: /tmp/", "/root/var/run/docker.sock,", "/home/.colima/default/docker.sock"},
		},
		{
			name:       "colima stopped",
			stale:      []string{"colima-work"},
			wantHint:   []string{"An engine seems installed but not running: run `colima start --profile work`."},
			wantReason: []string{"no known place answered"},
		},
		{
			name:     "desktop stopped",
			stale:    []string{"desktop"},
			wantHint: []string{"start Docker Desktop"},
		},
		{
			name:     "podman socket stale",
			stale:    []string{"podman"},
			wantHint: []string{"systemctl --user start podman.socket"},
		},
		{
			name:       "dead DOCKER_HOST is not replaced",
			place:      []string{"orbstack", "default"},
			env:        map[string]string{"DOCKER_HOST": "unix:///nonexistent/dead.sock"},
			wantReason: []string{"DOCKER_HOST (unix:///nonexistent/dead.sock) was chosen because DOCKER_HOST is set, but it does not answer: no socket at /nonexistent/dead.sock; no other engine is used in its place", "also answering: default socket, OrbStack"},
			wantHint:   []string{"DOCKER_HOST=unix:///nonexistent/dead.sock (from the environment) does not answer: no socket at /nonexistent/dead.sock; start that engine, or unset DOCKER_HOST to let MCP Sandbox detect one."},
		},
		{
			name:       "dead DOCKER_HOST and nothing else",
			env:        map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:1"},
			wantReason: []string{"DOCKER_HOST (tcp://127.0.0.1:1)", "does not answer: Cannot connect to the Docker daemon"},
			wantHint:   []string{"DOCKER_HOST=tcp://127.0.0.1:1 (from the environment) does not answer", "unset DOCKER_HOST"},
		},
		{
			name:       "bad DOCKER_HOST is not replaced",
			place:      []string{"default"},
			env:        map[string]string{"DOCKER_HOST": "fd://"},
			wantReason: []string{`cannot be used: invalid docker host: "fd://": unsupported scheme "fd"`},
			wantHint:   []string{"DOCKER_HOST=fd:// (from the environment) cannot be used: ", "; fix it, or unset DOCKER_HOST"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			for k, v := range tt.env {
				w.env[k] = v
			}
			w.place(tt.place...)
			w.stale(tt.stale...)
			r := w.detect()
			t.Logf("reason: %s\nhint: %s", r.Reason, r.Hint)
			var chosen, engine string
			if r.Chosen != nil {
				chosen, engine = r.Chosen.Source, r.Chosen.Engine
			}
			if chosen != tt.wantChosen || engine != tt.wantEngine {
				t.Errorf("chosen %q (%s), want %q (%s)", chosen, engine, tt.wantChosen, tt.wantEngine)
			}
			for _, s := range tt.wantReason {
				if !strings.Contains(r.Reason, s) {
					t.Errorf("reason %q lacks %q", r.Reason, s)
				}
			}
			for _, s := range tt.wantHint {
				if !strings.Contains(r.Hint, s) {
					t.Errorf("hint %q lacks %q", r.Hint, s)
				}
			}
			for _, c := range r.Candidates {
				if c.OK == (c.Error != "") {
					t.Errorf("%s: ok=%v but error %q", c.Host, c.OK, c.Error)
				}
			}
		})
	}
}

func TestDetectStaleAndHung(t *testing.T) {
	w := newWorld(t)
	w.env["DOCKER_HOST"] = "unix://" + filepath.Join(w.dir, "hung.sock")
	hungSocket(t, filepath.Join(w.dir, "hung.sock"))
	w.stale("default")
	opts := w.options()
	opts.Timeout = 300 * time.Millisecond

	start := time.Now()
	r := Detect(context.Background(), opts)
	took := time.Since(start)

	if took > 2*time.Second {
		t.Errorf("detect took %s with one hung endpoint and a 300ms timeout", took)
	}
	want := map[string]string{
		"DOCKER_HOST":    "did not answer within 300ms",
		"default socket": "did not answer: Cannot connect to the Docker daemon at unix://" + filepath.Join(w.root, "var/run/docker.sock") + ". Is the docker daemon running?",
	}
	got := map[string]string{}
	for _, c := range r.Candidates {
		if !c.Missing {
			got[c.Source] = c.Error
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if r.Chosen != nil {
		t.Errorf("chosen %+v, want none", r.Chosen)
	}
}

func TestDetectNothingIsQuick(t *testing.T) {
	w := newWorld(t)
	start := time.Now()
	r := w.detect()
	if took := time.Since(start); took > time.Second {
		t.Errorf("detect on an empty machine took %s", took)
	}
	if r.Chosen != nil {
		t.Errorf("chosen %+v on an empty machine", r.Chosen)
	}
}

func TestDetectCancelled(t *testing.T) {
	w := newWorld(t)
	hungSocket(t, places["default"].path(w))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := Detect(ctx, w.options())
	if took := time.Since(start); took > time.Second {
		t.Errorf("detect took %s after its context ended at 100ms", took)
	}
	if c := r.Candidates[0]; c.OK || c.Error != "detection was cut short: context deadline exceeded" {
		t.Errorf("hung default socket reported %+v", r.Candidates[0])
	}
}

func TestNewClient(t *testing.T) {
	t.Run("engine", func(t *testing.T) {
		w := newWorld(t)
		w.place("colima")
		cli, r, err := NewClient(context.Background(), w.options())
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		if r.Chosen == nil || r.Chosen.Engine != "Colima" {
			t.Fatalf("chosen %+v", r.Chosen)
		}
		info, err := cli.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.Name != "colima" {
			t.Errorf("client reached %q, want colima", info.Name)
		}
	})
	t.Run("none", func(t *testing.T) {
		w := newWorld(t)
		cli, r, err := NewClient(context.Background(), w.options())
		if !errors.Is(err, ErrNoEngine) {
			t.Fatalf("err = %v, want ErrNoEngine", err)
		}
		if cli != nil || r == nil || r.Hint == "" || !strings.Contains(err.Error(), r.Hint) {
			t.Errorf("client %v, result %+v, err %v", cli, r, err)
		}
	})
}

// TestDetectSymlinkedDefault: Colima and Docker Desktop link the default
// socket to their own; the report says where it leads, and the engine is
// named after that place when it does not describe itself.
func TestDetectSymlinkedDefault(t *testing.T) {
	w := newWorld(t)
	colima := places["colima"].path(w)
	serveFake(t, colima, fakeEngine{OperatingSystem: "Ubuntu 24.04.2 LTS", Name: "my-vm", Version: "27.4.0"})
	def := places["default"].path(w)
	if err := os.MkdirAll(filepath.Dir(def), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(colima, def); err != nil {
		t.Fatal(err)
	}
	r := w.detect()
	got := r.Candidates[0]
	if got.Source != "default socket" || !got.OK || got.Target != colima || got.Engine != EngineColima {
		t.Errorf("default socket: %+v, want ok, target %s, engine Colima", got, colima)
	}
	if r.Chosen != &r.Candidates[0] {
		t.Errorf("chosen %+v, want the default socket", r.Chosen)
	}
}
