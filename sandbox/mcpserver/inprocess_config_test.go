package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// TestInProcConfigChange: when the config file changes, the sessions are
// told (notifications/tools/list_changed) and the tools show the new
// limits; a change the tools do not show tells nobody.
func TestInProcConfigChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		host := t.TempDir()
		path := filepath.Join(t.TempDir(), "config.toml")
		write := func(maxTimeout, poolIdle int) {
			t.Helper()
			toml := fmt.Sprintf(`[images]
python = %[1]q
javascript = %[1]q
bash = %[1]q
pull = "never"
[pool]
size = 0
idle_seconds = %[4]d
[files]
read_roots = [%[2]q]
write_root = %[2]q
[limits]
max_exec_timeout_seconds = %[3]d
`, fake.DefaultImage, host, maxTimeout, poolIdle)
			if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write(600, 60)
		w, err := config.NewWatcher(path, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := startInProcOn(t, w, host)
		go w.Run(t.Context())
		if got := timeoutMax(t, p); got != 600.0 {
			t.Fatalf("timeout_seconds maximum %v before the change, want 600", got)
		}

		write(120, 60)
		time.Sleep(2 * time.Second) // the watcher reads the file each second
		synctest.Wait()
		if got := changes(p); got != 1 {
			t.Errorf("%d tools/list_changed after the limit changed, want 1", got)
		}
		if got := timeoutMax(t, p); got != 120.0 {
			t.Errorf("timeout_seconds maximum %v after the change, want 120", got)
		}
		res := p.call(t, "sandbox_exec", map[string]any{"sandbox_id": p.create(t, nil), "command": "true", "timeout_seconds": 300})
		if !res.IsError {
			t.Errorf("timeout_seconds 300 over the new maximum: not an error")
		}

		write(120, 90)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := changes(p); got != 1 {
			t.Errorf("%d tools/list_changed after a change the tools do not show, want still 1", got)
		}
	})
}

// timeoutMax is sandbox_exec's timeout_seconds maximum, as listed.
func timeoutMax(t *testing.T, p *inproc) any {
	t.Helper()
	res, err := p.cs.ListTools(t.Context(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "sandbox_exec" {
			continue
		}
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return s.Properties["timeout_seconds"]["maximum"]
	}
	t.Fatal("no sandbox_exec in tools/list")
	return nil
}

func changes(p *inproc) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.toolsChanged
}
