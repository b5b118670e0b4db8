package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpclient"
)

// TestServeUnreachableClusterOverStdio: the built server, with
// backend.kind "kubernetes" and a kubeconfig whose API server does not
// answer, completes the MCP handshake over real stdio and lists its
// tools; every tool call is an error naming the context and its server
// (never Docker), and the server is still there after them.
func TestServeUnreachableClusterOverStdio(t *testing.T) {
	bin := clitest.Binary(t, "mcp-sandbox")
	kubeconfig, apiURL := deadKubeconfig(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	table := fmt.Sprintf("[backend]\nkind = \"kubernetes\"\n\n[kubernetes]\nkubeconfig = %q\ncontext = \"dead-ctx\"\n", kubeconfig)
	if err := os.WriteFile(cfg, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "serve")
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "MCP_SANDBOX_CONFIG=" + cfg,
		"MCP_SANDBOX_STATE_DIR=" + filepath.Join(dir, "state"), "DOCKER_HOST=unix:///nonexistent/docker.sock"}
	sess, err := mcpclient.Start(ctx, cmd, mcpclient.Options{Name: "kube-unreachable-test"})
	if err != nil {
		t.Fatalf("the server did not complete the handshake: %v", err)
	}
	defer sess.Close()
	if tools, err := sess.ListTools(ctx, 5); err != nil || len(tools) == 0 {
		t.Fatalf("tools/list = %d tools, %v", len(tools), err)
	}
	want := "context dead-ctx (" + apiURL + ") does not answer"
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"run_code", map[string]any{"code": "print(6*7)"}},
		{"sandbox_create", map[string]any{}},
		{"sandbox_list", map[string]any{}},
		{"run_code", map[string]any{"code": "print(1)"}},
	} {
		res, err := sess.CallTool(ctx, call.tool, call.args)
		if err != nil {
			t.Fatalf("%s: %v (the server should answer every call)", call.tool, err)
		}
		if !res.IsError || !strings.Contains(res.Text, want) || strings.Contains(strings.ToLower(res.Text), "docker") {
			t.Errorf("%s on an unreachable cluster = %+v, want an error naming %q, no Docker", call.tool, res, want)
		}
	}
}

// doctor on a cluster that does not answer names the context it tried,
// its cluster and server (as the kubeconfig says), whether the context is
// named in the config or is the kubeconfig's current one; a context the
// kubeconfig lacks is named as such.
func TestDoctorNamesContextAndCluster(t *testing.T) {
	kubeconfig, apiURL := deadKubeconfig(t)
	for _, tc := range []struct{ table, want string }{
		{fmt.Sprintf("kubeconfig = %q\ncontext = \"dead-ctx\"\n", kubeconfig), "context:   dead-ctx (cluster dead, " + apiURL + ")\n"},
		{fmt.Sprintf("kubeconfig = %q\n", kubeconfig), "context:   dead-ctx (cluster dead, " + apiURL + ")\n"},
		{fmt.Sprintf("kubeconfig = %q\ncontext = \"no-such\"\n", kubeconfig), "context:   no-such (no such context in the kubeconfig, or no cluster in it)\n"},
	} {
		e, out, _ := kubeEnv(t, tc.table)
		if code := Run(context.Background(), e, []string{"doctor"}); code != 1 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("doctor: exit %d, want 1 and %q in:\n%s", code, tc.want, out)
		}
	}
}
