package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestProposeChangesOverStdio: the real server and engine (runc, gVisor
// with MCP_SANDBOX_TEST_RUNTIME=runsc, Podman with its DOCKER_HOST), a
// client that elicits. A project copied in, one file changed and one
// added in the sandbox: Apply writes both, leaves the third untouched
// and backs up the changed one; Reject changes nothing; a proposal onto
// ~/.bashrc is refused before anyone is asked.
func TestProposeChangesOverStdio(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	proposeOverStdio(t, serverEnv(t, ""))
}

// proposeOverStdio is TestProposeChangesOverStdio on the server env
// starts (a Docker engine's, a cluster's).
func proposeOverStdio(t *testing.T, env []string) {
	t.Helper()
	home := ""
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = h
		}
	}
	proj := filepath.Join(home, "proj")
	writeFile(t, filepath.Join(proj, "arith.py"), "def add(a, b):\n    return a - b\n")
	writeFile(t, filepath.Join(proj, "keep.py"), "untouched\n")
	writeFile(t, filepath.Join(home, ".bashrc"), "# mine\n")
	var answer atomic.Value
	answer.Store("apply")
	var asked atomic.Int32
	handler := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		if !strings.Contains(req.Params.Message, "fix add") || !strings.Contains(req.Params.Message, "+    return a + b") {
			t.Errorf("question %q lacks the summary or the diff", req.Params.Message)
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": answer.Load()}}, nil
	}
	p := startServer(t, env)
	c := mcp.NewClient(&mcp.Implementation{Name: "Claude Desktop", Version: "1.0"}, &mcp.ClientOptions{ElicitationHandler: handler})
	sess, err := c.Connect(testContext(t, 30*time.Second), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, p.stderr.String())
	}
	t.Cleanup(func() { sess.Close() })
	res := call(t, sess, "sandbox_create", map[string]any{})
	var made struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &made)
	id := made.SandboxID
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"copy_in", map[string]any{"sandbox_id": id, "host_path": "~/proj"}},
		{"sandbox_exec", map[string]any{"sandbox_id": id, "command": "sed -i 's/a - b/a + b/' proj/arith.py && printf 'import arith\\n' > proj/test_arith.py"}},
	} {
		if r := call(t, sess, c.tool, c.args); r.IsError {
			t.Fatalf("%s: %s", c.tool, text(r))
		}
	}
	propose := func() proposeOut {
		t.Helper()
		r := call(t, sess, "propose_changes", map[string]any{"sandbox_id": id, "path": "proj", "host_path": "~/proj", "summary": "fix add"})
		if r.IsError {
			t.Fatalf("propose_changes: %s", text(r))
		}
		var out proposeOut
		structured(t, r, &out)
		return out
	}

	answer.Store("reject")
	if out := propose(); out.Status != "declined" {
		t.Errorf("Reject: status %q", out.Status)
	}
	if got := readHost(t, filepath.Join(proj, "arith.py")); !strings.Contains(got, "a - b") {
		t.Errorf("arith.py after Reject: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(proj, "test_arith.py")); err == nil {
		t.Error("test_arith.py made after Reject")
	}

	answer.Store("apply")
	out := propose()
	if out.Status != "applied" || len(out.Files) != 2 || len(out.Backups) != 1 {
		t.Fatalf("Apply: %+v", out)
	}
	if got := readHost(t, filepath.Join(proj, "arith.py")); !strings.Contains(got, "a + b") {
		t.Errorf("arith.py after Apply: %q", got)
	}
	if got := readHost(t, filepath.Join(proj, "test_arith.py")); got != "import arith\n" {
		t.Errorf("test_arith.py after Apply: %q", got)
	}
	if got := readHost(t, filepath.Join(proj, "keep.py")); got != "untouched\n" {
		t.Errorf("keep.py: %q", got)
	}
	if got := readHost(t, out.Backups[0]); !strings.Contains(got, "a - b") {
		t.Errorf("backup %s: %q", out.Backups[0], got)
	}

	before := asked.Load()
	r := call(t, sess, "propose_changes", map[string]any{"sandbox_id": id, "path": "proj/arith.py", "host_path": "~/.bashrc"})
	if !r.IsError || !strings.Contains(text(r), "write_deny") || asked.Load() != before {
		t.Errorf("~/.bashrc: %q (isError %v, asked %d more)", text(r), r.IsError, asked.Load()-before)
	}
	if got := readHost(t, filepath.Join(home, ".bashrc")); got != "# mine\n" {
		t.Errorf(".bashrc: %q", got)
	}
}
