package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpclient"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestServeAnswersWithInvalidConfig: the README's config with a second
// [images] table appended (a duplicate table). The built server still
// completes the handshake and lists its tools; run_code is an error
// naming config.toml and the line; once the file is fixed, without a
// restart, run_code runs.
func TestServeAnswersWithInvalidConfig(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	bin := clitest.Binary(t, "mcp-sandbox")
	home, env := e2eHome(t)
	p := filepath.Join(home, ".config", "mcp-sandbox", "config.toml")
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	bad := append(append([]byte{}, good...), "[images]\nbash = \"x\"\n"...)
	if err := os.WriteFile(p, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(good), "\n") + 1

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	sess, err := mcpclient.Start(ctx, cmd, mcpclient.Options{Name: "gate-test"})
	if err != nil {
		t.Fatalf("the server did not complete the handshake: %v", err)
	}
	defer sess.Close()
	if tools, err := sess.ListTools(ctx, 5); err != nil || len(tools) == 0 {
		t.Fatalf("tools/list = %d tools, %v", len(tools), err)
	}
	res, err := sess.CallTool(ctx, "run_code", map[string]any{"code": "print(6*7)"})
	if err != nil {
		t.Fatal(err)
	}
	want := "config.toml:" + strconv.Itoa(line)
	if !res.IsError || !strings.Contains(res.Text, want) {
		t.Fatalf("run_code on an invalid config = %+v, want an error naming %s", res, want)
	}

	if err := os.WriteFile(p, good, 0o600); err != nil {
		t.Fatal(err)
	}
	clitest.WaitFor(t, "run_code once the file loads", 20*time.Second, func() bool {
		res, err = sess.CallTool(ctx, "run_code", map[string]any{"code": "print(6*7)"})
		return err == nil && !res.IsError
	}, func() string { return res.Text })
	if !strings.Contains(res.Text, "42") {
		t.Errorf("run_code after the fix = %q, want 42", res.Text)
	}
}

// TestConfigGate: the gate of a server that started on a file that did
// not load opens once the file loads and keeps the engine it started on,
// and stays shut (saying to restart) when the file chooses another.
func TestConfigGate(t *testing.T) {
	for _, tc := range []struct {
		name, fixed string
		open        bool
	}{
		{"same engine", "[limits]\nmemory_mb = 256\n", true},
		{"a docker.host", "[docker]\nhost = \"tcp://127.0.0.1:1\"\n", false},
		{"a cluster", "[backend]\nkind = \"kubernetes\"\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(p, []byte("[limits]\n[limits]\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			w, cfgErr := config.NewWatcherOrDefaults(p, time.Millisecond, nil)
			if cfgErr == nil {
				t.Fatal("a duplicate table loaded")
			}
			gate := configGate(w, true)
			if err := gate(); err == nil || !strings.Contains(err.Error(), "config.toml:2") {
				t.Fatalf("gate = %v, want the file's line", err)
			}
			if err := os.WriteFile(p, []byte(tc.fixed), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go w.Run(ctx)
			clitest.WaitFor(t, "the file to load", 10*time.Second, func() bool { return w.Err() == nil })
			err := gate()
			if tc.open != (err == nil) {
				t.Errorf("gate after the fix = %v, want open %v", err, tc.open)
			}
			if err != nil && !strings.Contains(err.Error(), "restart") {
				t.Errorf("gate = %v, want it to say to restart", err)
			}
		})
	}
}
