package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// TestFakeNetworkModes: allowlist networking, asked for by sandbox_create
// or by network.default, fails loudly where the command agent cannot run
// (the fake's images have no chmod): it never falls back to no network or
// a real one, and the container made for it is removed; allow_domains
// beyond the config's list are refused whatever the AI asks, before
// anything is created.
func TestFakeNetworkModes(t *testing.T) {
	withList := func(c *config.Config) {
		c.Network.AllowDomains = []string{"pypi.org", "*.pythonhosted.org", "127.0.0.2:8080"}
	}
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
		req  sandbox.CreateRequest
		want error
		says []string
	}{
		{"allowlist not available", withList, sandbox.CreateRequest{Network: "allowlist", AllowDomains: []string{"pypi.org", "files.pythonhosted.org:443"}},
			sandbox.ErrAllowlistUnavailable, []string{"allowlist networking needs the sandbox's command agent", "given no network instead", "no chmod"}},
		{"allowlist default", func(c *config.Config) { c.Network.Default = "allowlist" }, sandbox.CreateRequest{},
			sandbox.ErrAllowlistUnavailable, []string{"needs the sandbox's command agent"}},
		{"entry beyond the config", withList, sandbox.CreateRequest{Network: "allowlist", AllowDomains: []string{"pypi.org", "evil.example", "*.pypi.org"}},
			sandbox.ErrPolicy, []string{`evil.example, *.pypi.org are not in network.allow_domains of test-config.toml`, "only a person can allow a host"}},
		{"wildcard does not cover its domain", withList, sandbox.CreateRequest{Network: "allowlist", AllowDomains: []string{"pythonhosted.org"}},
			sandbox.ErrPolicy, []string{"pythonhosted.org is not in network.allow_domains"}},
		{"other port", withList, sandbox.CreateRequest{Network: "allowlist", AllowDomains: []string{"127.0.0.2:8081"}},
			sandbox.ErrPolicy, []string{"127.0.0.2:8081 is not in"}},
		{"bad entry", withList, sandbox.CreateRequest{Network: "allowlist", AllowDomains: []string{"https://pypi.org/simple"}},
			sandbox.ErrInvalid, []string{`allow_domains: "https://pypi.org/simple": write only the host`}},
		{"entries without allowlist", withList, sandbox.CreateRequest{AllowDomains: []string{"pypi.org"}},
			sandbox.ErrInvalid, []string{`allow_domains is only for network "allowlist"`}},
		{"unknown mode", nil, sandbox.CreateRequest{Network: "proxy"},
			sandbox.ErrInvalid, []string{`"none", "allowlist" or "egress"`}},
		{"egress not allowed", nil, sandbox.CreateRequest{Network: "egress"},
			sandbox.ErrPolicy, []string{"network.allow_egress = true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				eng, be := fakeEngine(t, nil, tc.edit)
				_, err := eng.Create(context.Background(), tc.req)
				if !errors.Is(err, tc.want) {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
				for _, s := range tc.says {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%q does not say %q", err, s)
					}
				}
				synctest.Wait() // the removal in the background
				if n := len(be.Containers()); n != 0 {
					t.Errorf("%d containers left", n)
				}
				if n := be.Calls(fake.OpCreate); n != 0 && !errors.Is(tc.want, sandbox.ErrAllowlistUnavailable) {
					t.Errorf("%d containers created", n)
				}
			})
		})
	}
}

// TestFakeRunCodeAllowlistDefault: run_code without a sandbox follows
// network.default, so "allowlist" there fails loudly too where the agent
// cannot run, leaving no container.
func TestFakeRunCodeAllowlistDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, func(c *config.Config) { c.Network.Default = "allowlist" })
		_, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{Code: "print(1)"})
		if !errors.Is(err, sandbox.ErrAllowlistUnavailable) {
			t.Fatalf("got %v", err)
		}
		synctest.Wait() // the removal in the background
		if n := len(be.Containers()); n != 0 {
			t.Errorf("%d containers left", n)
		}
	})
}
