package sandbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// TestLimitRefused: the engine's refusals of a CPU or memory limit name
// what chose the value (the argument or the config key and file) and the
// engine's range; any other create error passes through as it was.
func TestLimitRefused(t *testing.T) {
	cfg := &config.Config{Source: "/cfg/config.toml"}
	lim := inventory.Limits{CPUs: 64, MemoryMB: 4}
	other := errors.New("create container: Error response from daemon: No such image: x")
	for _, tc := range []struct {
		name string
		req  CreateRequest
		err  error
		want []string
	}{
		{"cpus from the config", CreateRequest{}, errors.New("create container: Error response from daemon: Range of CPUs is from 0.01 to 2.00, as there are only 2 CPUs available"),
			[]string{"cpus 64", "0.01 to 2.00", "set limits.cpus in /cfg/config.toml", "within a second"}},
		{"cpus from the argument", CreateRequest{CPUs: 64}, errors.New("Range of CPUs is from 0.01 to 2.00"),
			[]string{"pass cpus within that range", "limits.cpus in /cfg/config.toml"}},
		{"memory below the minimum", CreateRequest{}, errors.New("create container: Error response from daemon: Minimum memory limit allowed is 6MB"),
			[]string{"memory_mb 4", "Minimum memory limit allowed is 6MB", "set limits.memory_mb in /cfg/config.toml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := limitRefused(cfg, tc.req, lim, tc.err)
			if !errors.Is(got, ErrInvalid) {
				t.Errorf("%v: not ErrInvalid", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
	if got := limitRefused(cfg, CreateRequest{}, lim, other); got != other {
		t.Errorf("another error became %v", got)
	}
}
