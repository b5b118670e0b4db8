package dockerhost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEngineRule: the one engine rule. An explicit choice
// (docker.host, then DOCKER_HOST) is used when it answers its ping and
// otherwise nothing is, even though a known place answers; detection picks
// a known place only when nothing was chosen.
func TestEngineRule(t *testing.T) {
	tests := []struct {
		name       string
		place      []string
		configHost string // "alive" or "dead", in the world's directory
		dockerHost string // likewise
		wantChosen string // Source; "" for none
		wantEngine string
		wantErr    error // from NewClient
		wantHint   []string
	}{
		{
			name:       "dead DOCKER_HOST, default answers",
			place:      []string{"default", "podman"},
			dockerHost: "dead",
			wantErr:    ErrExplicitUnreachable,
			wantHint:   []string{"DOCKER_HOST=unix://$T/dead.sock (from the environment) does not answer: ", "; start that engine, or unset DOCKER_HOST to let MCP Sandbox detect one."},
		},
		{
			name:       "config host wins over DOCKER_HOST",
			place:      []string{"default"},
			configHost: "alive",
			dockerHost: "dead",
			wantChosen: "docker.host",
			wantEngine: EngineColima,
		},
		{
			name:       "dead config host, DOCKER_HOST answers",
			place:      []string{"default"},
			configHost: "dead",
			dockerHost: "alive",
			wantErr:    ErrExplicitUnreachable,
			wantHint:   []string{`docker.host = "unix://$T/dead.sock" (in $T/config.toml) does not answer: `, "; start that engine, or clear docker.host in $T/config.toml to let MCP Sandbox detect one."},
		},
		{
			name:       "DOCKER_HOST answers",
			place:      []string{"default"},
			dockerHost: "alive",
			wantChosen: "DOCKER_HOST",
			wantEngine: EngineColima,
		},
		{
			name:       "none explicit",
			place:      []string{"podman", "orbstack"},
			wantChosen: "OrbStack",
			wantEngine: EngineOrbStack,
		},
		{
			name:     "none explicit, none answers",
			wantErr:  ErrNoEngine,
			wantHint: []string{"Tried: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.place(tt.place...)
			alive := filepath.Join(w.dir, "alive.sock")
			serveFake(t, alive, fakeColima)
			dead := filepath.Join(w.dir, "dead.sock")
			staleSocket(t, dead)
			host := map[string]string{"alive": "unix://" + alive, "dead": "unix://" + dead}
			opts := w.options()
			opts.ConfigHost, opts.ConfigFile = host[tt.configHost], filepath.Join(w.dir, "config.toml")
			w.env["DOCKER_HOST"] = host[tt.dockerHost]

			cli, r, err := NewClient(context.Background(), opts)
			if cli != nil {
				defer cli.Close()
			}
			t.Logf("reason: %s\nhint: %s", r.Reason, r.Hint)
			var chosen, engine string
			if r.Chosen != nil {
				chosen, engine = r.Chosen.Source, r.Chosen.Engine
			}
			if chosen != tt.wantChosen || engine != tt.wantEngine {
				t.Errorf("chosen %q (%s), want %q (%s)", chosen, engine, tt.wantChosen, tt.wantEngine)
			}
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if errors.Is(err, ErrExplicitUnreachable) && !errors.Is(err, ErrNoEngine) {
				t.Errorf("err %v does not match ErrNoEngine", err)
			}
			hint := strings.ReplaceAll(r.Hint, w.dir, "$T")
			for _, s := range tt.wantHint {
				if !strings.Contains(hint, s) {
					t.Errorf("hint %q lacks %q", hint, s)
				}
			}
			if err != nil && !strings.Contains(err.Error(), r.Hint) {
				t.Errorf("err %q lacks the hint", err)
			}
			// Every known place is still probed and listed, for the
			// doctor's report.
			for _, name := range tt.place {
				p := "unix://" + places[name].path(w)
				if i := indexOf(r, p); i < 0 || !r.Candidates[i].OK {
					t.Errorf("%s is not listed as answering", p)
				}
			}
		})
	}
}

func indexOf(r *Result, host string) int {
	for i, c := range r.Candidates {
		if c.Host == host {
			return i
		}
	}
	return -1
}

// TestSlowVersionIsStillChosen: liveness is /_ping. An engine that answers
// /version and /info only after the ping timeout (Podman under load) is
// chosen with what it says once it says it, and one that never answers
// them is chosen with its version unknown.
func TestSlowVersionIsStillChosen(t *testing.T) {
	tests := []struct {
		name        string
		delay       time.Duration
		infoTimeout time.Duration
		wantVersion string
		wantEngine  string
		wantReason  string // the end of Reason
	}{
		{"answers after the ping timeout", 600 * time.Millisecond, 30 * time.Second, "5.5.2", EnginePodman, "(Podman 5.5.2)"},
		{"never answers", time.Hour, 300 * time.Millisecond, "unknown", "unknown", "(engine and version not known yet: /version did not answer within 300ms)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.place("default")
			sock := filepath.Join(w.dir, "podman.sock")
			slow := fakePodman
			slow.VersionDelay = tt.delay
			serveFake(t, sock, slow)
			w.env["DOCKER_HOST"] = "unix://" + sock
			opts := w.options()
			opts.Timeout = 300 * time.Millisecond
			opts.InfoTimeout = tt.infoTimeout

			r := Detect(context.Background(), opts)
			c := r.Chosen
			if c == nil || c.Source != "DOCKER_HOST" {
				t.Fatalf("chosen %+v, want DOCKER_HOST; reason: %s", c, r.Reason)
			}
			if !c.OK || c.Error != "" || c.Version != tt.wantVersion || c.Engine != tt.wantEngine {
				t.Errorf("chosen ok=%v error=%q version=%q engine=%q, want ok, %q, %q", c.OK, c.Error, c.Version, c.Engine, tt.wantVersion, tt.wantEngine)
			}
			if !strings.HasSuffix(r.Reason, tt.wantReason) {
				t.Errorf("reason %q, want it to end %q", r.Reason, tt.wantReason)
			}
		})
	}
}

// TestConnectKeepsToTheChoice: the server's client dials an explicit
// endpoint and nothing else, names it in messages, and reaches it once it
// answers, while the default socket answers all along.
func TestConnectKeepsToTheChoice(t *testing.T) {
	w := newWorld(t)
	w.place("default")
	sock := filepath.Join(w.dir, "later.sock")
	staleSocket(t, sock)
	w.env["DOCKER_HOST"] = "unix://" + sock

	conn, err := Connect(context.Background(), w.options())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Client.Close()
	if conn.Result.Chosen != nil {
		t.Errorf("chosen %+v, want none", conn.Result.Chosen)
	}
	if want := "DOCKER_HOST=unix://" + sock + " (from the environment)"; conn.Name() != want {
		t.Errorf("name %q, want %q", conn.Name(), want)
	}
	if want := "start that engine, or unset DOCKER_HOST to let MCP Sandbox detect one"; conn.Advice() != want {
		t.Errorf("advice %q, want %q", conn.Advice(), want)
	}
	if _, err := conn.Client.Ping(context.Background()); err == nil {
		t.Fatal("ping answered with DOCKER_HOST dead: the client dialled another engine")
	}

	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	serveFake(t, sock, fakeOrbStack)
	info, err := conn.Client.Info(context.Background())
	if err != nil {
		t.Fatalf("DOCKER_HOST answers now, but: %v", err)
	}
	if info.Name != fakeOrbStack.Name {
		t.Errorf("reached %q, want the engine at DOCKER_HOST", info.Name)
	}
}

// TestConnectInvalidChoice: an explicit host that cannot be read gives a
// client whose calls fail with why, not one that dials elsewhere.
func TestConnectInvalidChoice(t *testing.T) {
	w := newWorld(t)
	w.place("default")
	w.env["DOCKER_HOST"] = "fd://"
	conn, err := Connect(context.Background(), w.options())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Client.Close()
	_, err = conn.Client.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), `unsupported scheme "fd"`) {
		t.Errorf("ping: %v, want the invalid host's error", err)
	}
	if !strings.HasPrefix(conn.Advice(), "fix it, or unset DOCKER_HOST") {
		t.Errorf("advice %q", conn.Advice())
	}
}
