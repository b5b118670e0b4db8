package netglue

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

func TestMissing(t *testing.T) {
	allowed, err := netproxy.ParseEntries([]string{"*.example.com", "pypi.org"})
	if err != nil {
		t.Fatal(err)
	}
	asked, err := netproxy.ParseEntries([]string{"api.example.com", "pypi.org", "evil.example"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Missing(allowed, asked); !slices.Equal(got, []string{"evil.example"}) {
		t.Errorf("missing %q, want only evil.example", got)
	}
}

// loopback resolves every name to 127.0.0.1.
type loopback struct{}

func (loopback) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestNotAskable: too many entries, or a name a yes could not open, are
// not put to a person.
func TestNotAskable(t *testing.T) {
	var many []string
	for i := range maxAskEntries + 1 {
		many = append(many, fmt.Sprintf("h%d.example", i))
	}
	if why := NotAskable(context.Background(), loopback{}, many); !strings.Contains(why, "more than one question may hold") {
		t.Errorf("%d entries: %q", len(many), why)
	}
	if why := NotAskable(context.Background(), loopback{}, []string{"local.example"}); !strings.Contains(why, "a yes could not open it") {
		t.Errorf("a name of loopback only: %q", why)
	}
	if why := NotAskable(context.Background(), loopback{}, nil); why != "" {
		t.Errorf("nothing missing: %q", why)
	}
}
