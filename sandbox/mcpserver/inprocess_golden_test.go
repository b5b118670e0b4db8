package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestToolsListGolden holds the tool list clients see (names, arguments,
// required fields, types, descriptions, output schemas) to
// testdata/tools_list.golden.json: a change shows up as a diff in review.
// Refresh with go test -run TestToolsListGolden -update.
func TestToolsListGolden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, func(c *config.Config) {
			c.Files.ReadRoots, c.Files.WriteRoot = []string{"~"}, "~/Downloads/mcp-sandbox"
		})
		if _, err := p.cs.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		var got []byte
		for _, m := range p.out.messages(t) {
			var r struct {
				Tools json.RawMessage `json:"tools"`
			}
			if json.Unmarshal(m.Result, &r) == nil && r.Tools != nil {
				// Through a map: keys sorted, so a diff shows what changed
				// and not the order a library writes them in.
				var v any
				if err := json.Unmarshal(m.Result, &v); err != nil {
					t.Fatal(err)
				}
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = append(b, '\n')
			}
		}
		if got == nil {
			t.Fatal("no tools/list result on the wire")
		}
		var doc any
		if err := json.Unmarshal(got, &doc); err != nil {
			t.Fatal(err)
		}
		for _, where := range typeUnions(doc, "") {
			t.Errorf("%s: a type union (the MCP Inspector's --strict rejects it as not portable)", where)
		}
		golden := filepath.Join("testdata", "tools_list.golden.json")
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to write it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("tools/list differs from %s (run with -update and review the diff):\n%s", golden, firstDiff(string(want), string(got)))
		}
	})
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) && i < len(g); i++ {
		if w[i] != g[i] {
			return "line " + strconv.Itoa(i+1) + ":\n- " + w[i] + "\n+ " + g[i]
		}
	}
	return "one is a prefix of the other"
}

// typeUnions lists where a schema in v has a "type" that is a list (such
// as ["null","array"]).
func typeUnions(v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["type"].([]any); ok {
			out = append(out, at)
		}
		for k, x := range v {
			out = append(out, typeUnions(x, at+"/"+k)...)
		}
	case []any:
		for i, x := range v {
			out = append(out, typeUnions(x, at+"/"+strconv.Itoa(i))...)
		}
	}
	return out
}
