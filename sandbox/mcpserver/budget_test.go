package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// The tool surface is sent in every conversation, before any call: these
// are its budgets in compact JSON bytes (sandbox/README.md, Tools).
const (
	toolsListBudget = 9 << 10 // the whole tools/list result
	toolsCoreBudget = 6 << 10 // names, descriptions and input schemas
)

// toolsListSize measures the tools/list result on the wire: its compact
// JSON, and the part of it that is names, descriptions and input schemas.
func toolsListSize(t *testing.T, p *inproc) (total, core int) {
	t.Helper()
	if _, err := p.cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	var last json.RawMessage
	for _, m := range p.out.messages(t) {
		var r struct {
			Tools json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(m.Result, &r) == nil && r.Tools != nil {
			last = m.Result
		}
	}
	var res struct {
		Tools []struct {
			Name        any `json:"name"`
			Description any `json:"description"`
			InputSchema any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(last, &res); err != nil {
		t.Fatal(err)
	}
	size := func(v any) int {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	var whole any
	if err := json.Unmarshal(last, &whole); err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		core += size(tool.Name) + size(tool.Description) + size(tool.InputSchema)
	}
	return size(whole), core
}

// TestToolsListBudget: tools/list stays within its budgets, with the
// default config and with one that lists more (languages, images,
// allowed hosts).
func TestToolsListBudget(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"default", func(c *config.Config) { c.Images = config.Default().Images }},
		{"more", func(c *config.Config) {
			c.Network.AllowDomains = longDomains()
			c.Network.AllowEgress = true
			c.Images.Allowed = []string{"python:3.13-slim", "ghcr.io/example/data-science:2026.1"}
			c.Languages = map[string]config.Language{"ruby": {Image: "ruby:3.3-slim", Run: []string{"ruby", "{file}"}, Extension: ".rb"}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				total, core := toolsListSize(t, startInProc(t, c.edit))
				t.Logf("tools/list %d bytes, names+descriptions+input schemas %d bytes", total, core)
				if total > toolsListBudget {
					t.Errorf("tools/list is %d bytes, over its budget of %d", total, toolsListBudget)
				}
				if core > toolsCoreBudget {
					t.Errorf("names, descriptions and input schemas are %d bytes, over their budget of %d", core, toolsCoreBudget)
				}
			})
		})
	}
}

// longDomains is an allow_domains list longer than anyone should read.
func longDomains() []string {
	var d []string
	for _, h := range []string{"pypi.org", "*.pythonhosted.org", "registry.npmjs.org", "api.github.com", "*.githubusercontent.com"} {
		for i := range 8 {
			d = append(d, h+":"+string(rune('0'+i))+"443")
		}
	}
	return d
}

// TestInstructions: the instructions a session begins with say the
// settings of the config in force (the roots, the network default, the
// allowed hosts, whether a person can be asked) within 1 KB, however long
// the config's lists.
func TestInstructions(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*config.Config)
		want []string
	}{
		{"default", func(c *config.Config) {
			*c = *config.Default()
		}, []string{"below ~;", "below ~/Downloads/mcp-sandbox.", "none by default", "reaches no host", "the person can be asked"}},
		{"long lists", func(c *config.Config) {
			c.Network.AllowDomains = longDomains()
			c.Network.Default = "allowlist"
			c.Network.Ask = false
			c.Files.ReadRoots = []string{"/home/ada/" + strings.Repeat("projects/", 30), "/srv/data"}
			c.Files.WriteRoot = "/home/ada/" + strings.Repeat("out/", 80)
		}, []string{"allowlist by default", "pypi.org:0443, ", " more", "cannot be asked"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got := startInProc(t, c.edit).cs.InitializeResult().Instructions
				t.Logf("%d bytes:\n%s", len(got), got)
				if len(got) > 1<<10 {
					t.Errorf("instructions are %d bytes, over 1 KB", len(got))
				}
				for _, w := range c.want {
					if !strings.Contains(got, w) {
						t.Errorf("instructions do not say %q", w)
					}
				}
			})
		})
	}
}
