package mcpserver_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestInspectorStrict lists the real binary's tools with the MCP
// Inspector CLI's --strict, which reports every schema that is not
// portable (a "type" list such as ["null","array"], among others): there
// must be none. tools/list needs no engine. An Inspector without --strict
// counts as missing: the test skips, or fails under CI=true.
func TestInspectorStrict(t *testing.T) {
	bin := testenv.InspectorStrict(t)
	srv := serverBin(t) // built before the clock starts
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	help, _ := exec.CommandContext(ctx, bin, "--cli", "--help").CombinedOutput()
	if !strings.Contains(string(help), "--strict") {
		testenv.Missing(t, "an MCP Inspector CLI with --strict (a 2.x release; "+bin+" has none)")
	}
	// The 2.x CLI gives the server only what -e names, not its own
	// environment: the test config, state and home go both ways.
	env := serverEnv(t, "")
	args := []string{"--cli", "--strict", "--method", "tools/list"}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	cmd := exec.CommandContext(ctx, bin, append(args, srv, "serve")...)
	cmd.Env = env
	cmd.Dir = filepath.Dir(bin)
	var stderr clitest.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspector --strict: %v\n%s\n%s", err, out, stderr.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "Warning:") || strings.HasPrefix(l, "Error:") {
			t.Errorf("not portable:\n%s", stderr.String())
			break
		}
	}
	if !strings.Contains(string(out), `"name": "run_code"`) {
		t.Errorf("tools/list:\n%s", out)
	}
}
