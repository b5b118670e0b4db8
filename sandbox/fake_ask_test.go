package sandbox_test

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// hostsResolver answers from a table.
type hostsResolver map[string]string

func (h hostsResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := h[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// TestFakeAskOnlyWhatCanBeGranted: sandbox_create's entries are put to a
// person only when a yes could open them and the question stays short:
// a name resolving to loopback, or more than 10 entries, are refused
// without a question, saying why; a person's no says they declined.
func TestFakeAskOnlyWhatCanBeGranted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked [][]string
		answer := netproxy.Declined
		cfg := config.Default()
		cfg.Source = "test-config.toml"
		cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
		cfg.Images.Pull, cfg.Pool.Size = "never", 0
		eng := sandbox.NewEngine(sandbox.Options{Backend: fake.New(), Config: config.Static(cfg), OwnerID: "fake-owner", TickInterval: fakeTick, UsageInterval: fakeTick,
			Resolver: hostsResolver{"localhost": "127.0.0.1", "api.example": "93.184.216.34"},
			AskEntries: func(_ context.Context, _ string, entries []string) (netproxy.Decision, error) {
				asked = append(asked, entries)
				return answer, nil
			}})
		defer eng.Close(context.Background())
		many := make([]string, 11)
		for i := range many {
			many[i] = "h" + strconv.Itoa(i) + ".example"
		}
		for _, tc := range []struct {
			name    string
			domains []string
			ask     bool
			says    string
		}{
			{"name resolving to loopback", []string{"pypi.org", "localhost:8086"}, false, "localhost resolves to 127.0.0.1, a loopback address"},
			{"more than 10", many, false, "11 entries are more than one question may hold (10)"},
			{"declined", []string{"api.example"}, true, "the person asked declined it"},
		} {
			asked = nil
			_, err := eng.Create(context.Background(), sandbox.CreateRequest{Network: sandbox.NetworkAllowlist, AllowDomains: tc.domains})
			if !errors.Is(err, sandbox.ErrPolicy) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s: %v; want a refusal saying %q", tc.name, err, tc.says)
			}
			if (len(asked) > 0) != tc.ask {
				t.Errorf("%s: asked %q, want asked: %v", tc.name, asked, tc.ask)
			}
		}
	})
}
