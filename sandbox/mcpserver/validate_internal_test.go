package mcpserver

import (
	"encoding/json"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// toolDefs are the tools of a server on the fake backend.
func toolDefs(t *testing.T) []toolDef {
	t.Helper()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng := sandbox.NewEngine(sandbox.Options{Backend: fake.New(), Config: config.Static(config.Default()), State: st, OwnerID: "validate-test"})
	return New(Options{Engine: eng, State: st}).tools()
}

// TestArgSchemasCompile: the tools' check schemas are compiled on each
// tool's first call, not at start-up; each compiles, names its arguments,
// and refuses arguments in the same words.
func TestArgSchemasCompile(t *testing.T) {
	args, err := inputSchemas(toolDefs(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(args) < 10 {
		t.Fatalf("%d tools", len(args))
	}
	for name, a := range args {
		if a.schema != nil {
			t.Errorf("%s: schema compiled before the tool's first call", name)
		}
		if err := a.compile(); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var doc struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(a.raw, &doc); err != nil {
			t.Fatal(err)
		}
		want := make([]string, 0, len(doc.Properties))
		for p := range doc.Properties {
			want = append(want, p)
		}
		sort.Strings(want)
		if !slices.Equal(a.names, want) {
			t.Errorf("%s: arguments %v, want %v", name, a.names, want)
		}
	}
}

// TestArgSchemaFirstCalls: concurrent first calls compile the schema once
// and all get the same words.
func TestArgSchemaFirstCalls(t *testing.T) {
	args, err := inputSchemas(toolDefs(t))
	if err != nil {
		t.Fatal(err)
	}
	a := args["sandbox_stop"]
	want := map[string]any{
		`{"sandbox_id":5}`:          "sandbox_id must be a string (got a number)",
		`{"all":"yes","x":1}`:       "all must be a boolean (got a string); there is no argument x (the tool takes all, sandbox_id)",
		`{"sandbox_id":"abcdefgh"}`: "",
	}
	var wg sync.WaitGroup
	for range 4 {
		for in, w := range want {
			wg.Go(func() {
				var v any
				if err := json.Unmarshal([]byte(in), &v); err != nil {
					t.Error(err)
					return
				}
				if got := a.check(v); got != w {
					t.Errorf("check(%s) = %q, want %q", in, got, w)
				}
			})
		}
	}
	wg.Wait()
}

// TestArgWordsWhole: what is wrong with the arguments as a whole is said
// of "the arguments", a tool of no arguments says it takes none, and the
// client's bytes (json.RawMessage) get the words their decoded value gets.
func TestArgWordsWhole(t *testing.T) {
	args, err := inputSchemas(toolDefs(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, in, want string }{
		{"sandbox_stop", `"str"`, "the arguments must be an object (got a string)"},
		{"sandbox_stop", `[1]`, "the arguments must be an object (got an array)"},
		{"sandbox_stop", ` null `, "pass"},
		{"sandbox_list", `{"x":1}`, "there is no argument x (the tool takes none)"},
		{"sandbox_exec", `{"sandbox_id":"abcdefgh","command":"true","env":{"A":1}}`, "env.A must be a string (got a number)"},
		{"sandbox_exec", `{"sandbox_id":"abcdefgh"}`, "command is required"},
	} {
		want := c.want
		if want == "pass" {
			want = ""
		}
		if got := args[c.tool].check(json.RawMessage(c.in)); got != want {
			t.Errorf("%s: check(raw %s) = %q, want %q", c.tool, c.in, got, want)
		}
		var v any
		if err := json.Unmarshal([]byte(c.in), &v); err != nil {
			t.Fatal(err)
		}
		if got := args[c.tool].check(v); got != want {
			t.Errorf("%s: check(%s) = %q, want %q", c.tool, c.in, got, want)
		}
	}
}
