package dockerhost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeConfig writes a docker config.json with currentContext, as the
// docker CLI does after `docker context use`.
func writeConfig(t *testing.T, configDir, current string) {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"auths": map[string]any{}, "currentContext": current}, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(configDir, "config.json"), b)
}

// writeContext writes a context the way `docker context create` does: its
// metadata in contexts/meta/<sha256 of name>/meta.json, and its TLS files,
// if any, in contexts/tls/<sha256 of name>/docker/.
func writeContext(t *testing.T, configDir, name, host string, skipTLSVerify bool, tls *testPKI, tlsFiles ...string) {
	t.Helper()
	meta := map[string]any{
		"Name":      name,
		"Metadata":  map[string]any{"Description": "made by the test"},
		"Endpoints": map[string]any{"docker": map[string]any{"Host": host, "SkipTLSVerify": skipTLSVerify}},
	}
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(configDir, "contexts", "meta", contextDir(name), "meta.json"), b)
	if tls != nil {
		tls.copyTo(t, filepath.Join(configDir, "contexts", "tls", contextDir(name), "docker"), tlsFiles...)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestContextDir(t *testing.T) {
	// The same as `printf colima | sha256sum`, the name the docker CLI uses.
	if got, want := contextDir("colima"), "f24fd3749c1368328e2b149bec149cb6795619f244c5b584e844961215dadd16"; got != want {
		t.Errorf("contextDir(colima) = %s, want %s", got, want)
	}
}

func TestDetectExplicit(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(t *testing.T, w *world)
		wantFirst  row // the first candidate
		wantError  string
		wantChosen string
		wantReason string
		wantHint   string
	}{
		{
			name: "current context",
			setup: func(t *testing.T, w *world) {
				cfg := filepath.Join(w.home, ".docker")
				writeConfig(t, cfg, "colima")
				writeContext(t, cfg, "colima", "unix://"+filepath.Join(w.dir, "ctx/colima.sock"), false, nil)
				serveFake(t, filepath.Join(w.dir, "ctx/colima.sock"), fakeColima)
				w.place("default")
			},
			wantFirst:  row{Source: "context colima", Host: "unix://$T/ctx/colima.sock", Explicit: true, OK: true, Engine: "Colima"},
			wantChosen: "context colima",
			wantReason: "because it is the current context in $T/home/.docker/config.json, and it answered (Colima 27.4.0)",
		},
		{
			name: "DOCKER_CONTEXT overrides the config",
			setup: func(t *testing.T, w *world) {
				cfg := filepath.Join(w.home, ".docker")
				writeConfig(t, cfg, "colima")
				writeContext(t, cfg, "colima", "unix://"+filepath.Join(w.dir, "ctx/colima.sock"), false, nil)
				writeContext(t, cfg, "work", "unix://"+filepath.Join(w.dir, "ctx/work.sock"), false, nil)
				serveFake(t, filepath.Join(w.dir, "ctx/colima.sock"), fakeColima)
				serveFake(t, filepath.Join(w.dir, "ctx/work.sock"), fakeColimaWork)
				w.env["DOCKER_CONTEXT"] = "work"
			},
			wantFirst:  row{Source: "context work", Host: "unix://$T/ctx/work.sock", Explicit: true, OK: true, Engine: "Colima"},
			wantChosen: "context work",
			wantReason: "because DOCKER_CONTEXT names it",
		},
		{
			name: "DOCKER_HOST overrides both",
			setup: func(t *testing.T, w *world) {
				cfg := filepath.Join(w.home, ".docker")
				writeConfig(t, cfg, "colima")
				writeContext(t, cfg, "colima", "unix://"+filepath.Join(w.dir, "ctx/colima.sock"), false, nil)
				serveFake(t, filepath.Join(w.dir, "ctx/colima.sock"), fakeColima)
				serveFake(t, filepath.Join(w.dir, "ctx/host.sock"), fakeOrbStack)
				w.env["DOCKER_CONTEXT"] = "colima"
				w.env["DOCKER_HOST"] = "unix://" + filepath.Join(w.dir, "ctx/host.sock")
			},
			wantFirst:  row{Source: "DOCKER_HOST", Host: "unix://$T/ctx/host.sock", Explicit: true, OK: true, Engine: "OrbStack"},
			wantChosen: "DOCKER_HOST",
			wantReason: "because DOCKER_HOST is set, and it answered (OrbStack 28.3.3)",
		},
		{
			name: "DOCKER_CONFIG moves the config",
			setup: func(t *testing.T, w *world) {
				cfg := filepath.Join(w.dir, "elsewhere")
				writeConfig(t, cfg, "rd")
				writeContext(t, cfg, "rd", "unix://"+filepath.Join(w.dir, "ctx/rd.sock"), false, nil)
				serveFake(t, filepath.Join(w.dir, "ctx/rd.sock"), fakeRancher)
				w.env["DOCKER_CONFIG"] = cfg
			},
			wantFirst:  row{Source: "context rd", Host: "unix://$T/ctx/rd.sock", Explicit: true, OK: true, Engine: "Rancher Desktop"},
			wantChosen: "context rd",
			wantReason: "current context in $T/elsewhere/config.json",
		},
		{
			name: "default context means none",
			setup: func(t *testing.T, w *world) {
				writeConfig(t, filepath.Join(w.home, ".docker"), "default")
				w.place("default")
			},
			wantFirst:  row{Source: "default socket", Host: "unix://$T/root/var/run/docker.sock", OK: true, Engine: "Docker Engine"},
			wantChosen: "default socket",
			wantReason: "neither docker.host, DOCKER_HOST nor a docker context is set",
		},
		{
			name: "context without host",
			setup: func(t *testing.T, w *world) {
				cfg := filepath.Join(w.home, ".docker")
				writeConfig(t, cfg, "plain")
				writeContext(t, cfg, "plain", "", false, nil)
				w.place("default")
			},
			wantFirst:  row{Source: "context plain", Host: "unix://$T/root/var/run/docker.sock", Explicit: true, OK: true, Engine: "Docker Engine"},
			wantChosen: "context plain",
		},
		{
			name: "missing context is not replaced",
			setup: func(t *testing.T, w *world) {
				w.env["DOCKER_CONTEXT"] = "nope"
				w.place("colima")
			},
			wantFirst:  row{Source: "context nope", Explicit: true},
			wantError:  `docker context "nope" not found (no $T/home/.docker/contexts/meta/`,
			wantReason: "but it cannot be used: docker context \"nope\" not found (no $T/home/.docker/contexts/meta/",
			wantHint:   "; fix it, or unset DOCKER_CONTEXT to let MCP Sandbox detect one.",
		},
		{
			name: "stopped context",
			setup: func(t *testing.T, w *world) {
				cfg := filepath.Join(w.home, ".docker")
				writeConfig(t, cfg, "colima")
				writeContext(t, cfg, "colima", "unix://"+filepath.Join(w.home, ".colima/default/docker.sock"), false, nil)
				staleSocket(t, filepath.Join(w.home, ".colima/default/docker.sock"))
				w.place("podman")
			},
			wantFirst:  row{Source: "context colima", Host: "unix://$T/home/.colima/default/docker.sock", Explicit: true},
			wantError:  "did not answer: Cannot connect to the Docker daemon",
			wantReason: "but it does not answer: Cannot connect to the Docker daemon",
			wantHint:   "start that engine, or switch with `docker context use default` to let MCP Sandbox detect one.",
		},
		{
			name: "broken config",
			setup: func(t *testing.T, w *world) {
				writeFile(t, filepath.Join(w.home, ".docker/config.json"), []byte("{"))
				w.place("default")
			},
			wantFirst:  row{Source: "docker config", Explicit: true},
			wantError:  "read docker config $T/home/.docker/config.json: unexpected end of JSON input",
			wantReason: "docker config was chosen because the docker config file exists, but it cannot be used: read docker config",
			wantHint:   "unexpected end of JSON input; fix it.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			tt.setup(t, w)
			r := w.detect()
			t.Logf("reason: %s\nhint: %s", r.Reason, r.Hint)
			if diff := cmp.Diff(tt.wantFirst, w.rows(r)[0]); diff != "" {
				t.Errorf("first candidate (-want +got):\n%s", diff)
			}
			if got := strings.ReplaceAll(r.Candidates[0].Error, w.dir, "$T"); !strings.HasPrefix(got, tt.wantError) || (tt.wantError == "") != (got == "") {
				t.Errorf("first candidate's error = %q, want it to start with %q", got, tt.wantError)
			}
			var chosen string
			if r.Chosen != nil {
				chosen = r.Chosen.Source
			}
			if chosen != tt.wantChosen {
				t.Errorf("chosen %q, want %q", chosen, tt.wantChosen)
			}
			if reason := strings.ReplaceAll(r.Reason, w.dir, "$T"); !strings.Contains(reason, tt.wantReason) {
				t.Errorf("reason %q lacks %q", reason, tt.wantReason)
			}
			if !strings.Contains(r.Hint, tt.wantHint) || (tt.wantHint == "") != (r.Hint == "") {
				t.Errorf("hint %q, want one with %q", r.Hint, tt.wantHint)
			}
			for _, c := range r.Candidates[1:] {
				if c.Host == r.Candidates[0].Host {
					t.Errorf("%s is listed twice", c.Host)
				}
			}
		})
	}
}
