package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// TestInProcBackgroundRefused: a background command cannot take stdin
// (the fake runs no process past its exec, so starts are tested on
// Docker: background_test.go).
func TestInProcBackgroundRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		id := p.create(t, map[string]any{"language": "bash"})
		res := p.call(t, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "cat", "stdin": "x", "background": true})
		if !res.IsError || !strings.Contains(text(res), "write the input to a file") {
			t.Errorf("background with stdin: %q (isError %v)", text(res), res.IsError)
		}
	})
}

// TestInProcBusyProgress: a run_code that must wait for the previous one
// in the same sandbox says so at once in a progress notification, and
// its own timeout starts only when it runs.
func TestInProcBusyProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		id := p.create(t, map[string]any{"language": "bash"})
		first := make(chan *mcp.CallToolResult, 1)
		go func() {
			first <- p.call(t, "run_code", map[string]any{"sandbox_id": id, "code": "sleep 30; echo first"})
		}()
		time.Sleep(time.Second) // the first call holds the sandbox's shell
		params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
			"sandbox_id": id, "code": "echo second", "timeout_seconds": 5,
		}}
		params.SetProgressToken("busy")
		res, err := p.cs.CallTool(context.Background(), params)
		if err != nil || res.IsError || !strings.Contains(text(res), "second") || strings.Contains(text(res), "timed out") {
			t.Fatalf("second call: %v %q", err, text(res))
		}
		if r := <-first; r.IsError || !strings.Contains(text(r), "first") {
			t.Errorf("first call: %q", text(r))
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.prog) == 0 || p.prog[0] != "waiting for the previous call in this sandbox, running 1 s" {
			t.Errorf("progress messages %q, want the wait first", p.prog)
		}
	})
}

// TestInProcRunCodeImage: a one-shot run_code runs in the image it names
// when the policy allows it, and is refused otherwise; with a sandbox_id
// an image is an error.
func TestInProcRunCodeImage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, func(c *config.Config) { c.Images.Allowed = []string{"fake/other:*"} })
		// The other image names its own user, which its sandbox runs as.
		p.be.AddImage("fake/other:2", fake.Image{User: "4242"})
		res := p.call(t, "run_code", map[string]any{"code": "echo uid; id -u", "language": "bash", "image": "fake/other:2"})
		if res.IsError || !strings.Contains(text(res), "uid\n4242") {
			t.Fatalf("allowed image: %q", text(res))
		}
		res = p.call(t, "run_code", map[string]any{"code": "echo x", "language": "bash", "image": "evil/miner:1"})
		if !res.IsError || !strings.Contains(text(res), "not allowed") || !strings.Contains(text(res), "images.allowed") {
			t.Errorf("refused image: %q (isError %v)", text(res), res.IsError)
		}
		id := p.create(t, map[string]any{"language": "bash"})
		res = p.call(t, "run_code", map[string]any{"code": "echo x", "sandbox_id": id, "image": "fake/other:2"})
		if !res.IsError || !strings.Contains(text(res), "fixed when a sandbox is created") {
			t.Errorf("image with sandbox_id: %q (isError %v)", text(res), res.IsError)
		}
	})
}

// TestInProcTimeoutLooksLikeServer: a command that timed out after
// printing what servers print says to start it in the background; one
// that did not, does not.
func TestInProcTimeoutLooksLikeServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		id := p.create(t, map[string]any{"language": "bash"})
		for _, c := range []struct {
			out  string
			hint bool
		}{
			{"Serving HTTP on 127.0.0.1 port 8000 (http://127.0.0.1:8000/) ...", true},
			{" * Running on http://127.0.0.1:5000", true},
			{"computing", false},
		} {
			res := p.call(t, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo '" + c.out + "'; sleep 100", "timeout_seconds": 1})
			if got := strings.Contains(text(res), "background: true"); got != c.hint || !strings.Contains(text(res), "timed out") {
				t.Errorf("%q: hint %v, want %v:\n%s", c.out, got, c.hint, text(res))
			}
		}
	})
}

// TestInProcBusyInstall: an install_packages that must wait for the
// previous install in the same sandbox says so at once.
func TestInProcBusyInstall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		id := p.create(t, map[string]any{"language": "bash"})
		p.be.Delay(fake.OpRunHelper, 30*time.Second)
		args := map[string]any{"sandbox_id": id, "packages": []any{"x"}, "manager": "pip"}
		first := make(chan *mcp.CallToolResult, 1)
		go func() { first <- p.call(t, "install_packages", args) }()
		time.Sleep(time.Second)
		params := &mcp.CallToolParams{Name: "install_packages", Arguments: args}
		params.SetProgressToken("busy")
		if _, err := p.cs.CallTool(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		<-first
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.prog) == 0 || p.prog[0] != "waiting for the previous install in this sandbox, running 1 s" {
			t.Errorf("progress messages %q, want the wait first", p.prog)
		}
	})
}
