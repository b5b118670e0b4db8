package clientconfig

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailscale/hujson"
)

// rewrite stands in for Claude Desktop rewriting its own file: it decodes
// the file, lets change alter it, and writes it back as plain JSON, without
// comments and in its own order.
func rewrite(t *testing.T, path string, change func(doc map[string]any)) {
	t.Helper()
	std, err := hujson.Standardize([]byte(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(std, &raw); err != nil {
		t.Fatal(err)
	}
	change(raw)
	b, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStatusNoticesRewrites follows an entry through what Claude Desktop
// does to its file: dropping our entry, or changing it, must show in Status
// so the tray can offer a repair, and Install repairs it.
func TestStatusNoticesRewrites(t *testing.T) {
	env, _, path := setUp(t, claudeDesktop, fixture(t))
	ctx := context.Background()
	want := StatusOptions{Env: env, Command: goldenCommand, DockerHost: goldenDockerHost}
	res, err := claudeDesktop.Install(ctx, installOpts(env))
	if err != nil {
		t.Fatal(err)
	}
	st, err := claudeDesktop.Status(want)
	if err != nil || !st.Installed || !st.Exists || !st.Configured || !st.Matches || st.LastBackup != res.Backup {
		t.Fatalf("after install: %+v, %v", st, err)
	}
	if diff := cmp.Diff(&Entry{Command: goldenCommand, Args: []string{"serve"}, Env: map[string]string{"DOCKER_HOST": goldenDockerHost}}, st.Entry); diff != "" {
		t.Errorf("Entry (-want +got):\n%s", diff)
	}

	rewrite(t, path, func(doc map[string]any) {
		delete(doc["mcpServers"].(map[string]any), ServerName)
	})
	st, err = claudeDesktop.Status(want)
	if err != nil || st.Configured || st.Matches {
		t.Errorf("after the entry was dropped: %+v, %v", st, err)
	}

	if _, err := claudeDesktop.Install(ctx, installOpts(env)); err != nil {
		t.Fatal(err)
	}
	rewrite(t, path, func(doc map[string]any) {
		e := doc["mcpServers"].(map[string]any)[ServerName].(map[string]any)
		e["command"] = "/old/mcp-sandbox"
		delete(e, "env")
	})
	st, err = claudeDesktop.Status(want)
	if err != nil || !st.Configured || st.Matches {
		t.Fatalf("after the entry was changed: %+v, %v", st, err)
	}
	wantDiffs := []string{
		`command is "/old/mcp-sandbox", want "/opt/MCP Sandbox/bin/mcp-sandbox"`,
		`env DOCKER_HOST is missing, want "unix:///run/user/1000/docker.sock"`,
	}
	if diff := cmp.Diff(wantDiffs, st.Differences); diff != "" {
		t.Errorf("Differences (-want +got):\n%s", diff)
	}

	if _, err := claudeDesktop.Install(ctx, installOpts(env)); err != nil {
		t.Fatal(err)
	}
	if st, err = claudeDesktop.Status(want); err != nil || !st.Matches {
		t.Errorf("after repair: %+v, %v", st, err)
	}
}

func TestStatusBrokenFile(t *testing.T) {
	env, _, path := setUp(t, zed, []byte("{\n  \"theme\": \"One Dark\",,\n}\n"))
	st, err := zed.Status(StatusOptions{Env: env})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Path != path || pe.Line != 2 {
		t.Fatalf("Status error = %v, want a *ParseError at %s:2", err, path)
	}
	if !st.Exists || !st.Installed || st.Configured || st.Path != path {
		t.Errorf("Status = %+v", st)
	}
}

func TestOverview(t *testing.T) {
	env, home := testEnv(t)
	if _, err := cursor.Install(context.Background(), InstallOptions{Env: env, Command: goldenCommand, Force: true}); err != nil {
		t.Fatal(err)
	}
	setUpBroken := home + "/.gemini"
	if err := os.MkdirAll(setUpBroken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(setUpBroken+"/settings.json", []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	states := Overview(env)
	if len(states) != len(Names()) {
		t.Fatalf("Overview has %d clients, want %d", len(states), len(Names()))
	}
	b, err := json.Marshal(states[1])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"cursor","installed":true,"configured":true,"path":"` + home + `/.cursor/mcp.json"}`
	if string(b) != want {
		t.Errorf("cursor's state = %s, want %s", b, want)
	}
	for _, s := range states {
		switch s.Name {
		case "gemini":
			if !s.Installed || s.Configured || !strings.Contains(s.Error, "does not parse") {
				t.Errorf("gemini = %+v, want installed with a parse error", s)
			}
		case "cursor":
		default:
			if s.Installed || s.Configured || s.Error != "" || s.Path == "" {
				t.Errorf("%s = %+v, want not installed, with its path", s.Name, s)
			}
		}
	}
}
