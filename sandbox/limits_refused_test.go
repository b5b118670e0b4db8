package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// TestCreateCPUsBeyondEngine: limits.cpus above the engine's cores (64,
// where CI has 2 or 4) is refused by the engine at create; the error names
// the key, the config file and the engine's range, instead of the
// daemon's bare answer.
func TestCreateCPUsBeyondEngine(t *testing.T) {
	eng, _ := newEngine(t, func(c *config.Config) {
		c.Source = "/etc/mcp-sandbox-test/config.toml"
		c.Limits.CPUs = 64
		c.Pool.Size = 0
	})
	_, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "python"})
	if err == nil {
		t.Skip("this engine runs a sandbox with 64 CPUs (the host has that many, or the engine does not check)")
	}
	msg := err.Error()
	t.Log(msg)
	if !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("error class: %v, want ErrInvalid", err)
	}
	for _, want := range []string{"limits.cpus", "/etc/mcp-sandbox-test/config.toml", "to "} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}
