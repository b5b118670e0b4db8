package tomlscan_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/tomlscan"
)

const doc = "# head comment\r\n" + `top = "[not.a.header]" # a = b
ml = """
[also.not] = 1
"""
  "quoted=key".x = 'lit'
arr = [
  [1, 2], # [comment]
  ["[x]"],
]
[a."b.c".'d']   # a header
k = { in = "line", n = [1] }

# trailing comment
[[e.f]]
g = 1
`

func TestScan(t *testing.T) {
	stmts, err := tomlscan.Scan([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Kind        tomlscan.Kind
		Table, Key  string
		InArray     bool
		Line, Value string
	}
	var got []row
	for _, s := range stmts {
		r := row{Kind: s.Kind, Table: s.Table, Key: s.Key, InArray: s.InArrayTable, Line: doc[s.Start:s.End]}
		if s.Kind == tomlscan.KeyValue {
			r.Value = doc[s.ValStart:s.ValEnd]
		}
		got = append(got, r)
	}
	kv, tb, at := tomlscan.KeyValue, tomlscan.Table, tomlscan.ArrayTable
	want := []row{
		{kv, "", "top", false, "top = \"[not.a.header]\" # a = b\n", `"[not.a.header]"`},
		{kv, "", "ml", false, "ml = \"\"\"\n[also.not] = 1\n\"\"\"\n", "\"\"\"\n[also.not] = 1\n\"\"\""},
		{kv, "", "quoted=key.x", false, "  \"quoted=key\".x = 'lit'\n", "'lit'"},
		{kv, "", "arr", false, "arr = [\n  [1, 2], # [comment]\n  [\"[x]\"],\n]\n", "[\n  [1, 2], # [comment]\n  [\"[x]\"],\n]"},
		{tb, "", "a.b.c.d", false, "[a.\"b.c\".'d']   # a header\n", ""},
		{kv, "a.b.c.d", "k", false, "k = { in = \"line\", n = [1] }\n", `{ in = "line", n = [1] }`},
		{at, "", "e.f", false, "[[e.f]]\n", ""},
		{kv, "e.f", "g", true, "g = 1\n", "1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan (-want +got):\n%s", diff)
	}
	if p := stmts[4].Path; !cmp.Equal(p, []string{"a", "b.c", "d"}) {
		t.Errorf("header path %q", p)
	}
}

func TestScanInvalid(t *testing.T) {
	if _, err := tomlscan.Scan([]byte("a = 1\nb = \n")); err == nil {
		t.Error("Scan of a document that does not parse gave no error")
	}
}

// FuzzScan: in any document that parses, putting a new value where Scan
// says a value stands gives a document that parses and has that value
// there, and every statement's lines follow the one before.
func FuzzScan(f *testing.F) {
	f.Add(doc)
	f.Add("a.b = 1\n[c]\nd = [\n1,\n]\n")
	f.Fuzz(func(t *testing.T, src string) {
		var orig map[string]any
		if toml.Unmarshal([]byte(src), &orig) != nil {
			return
		}
		stmts, err := tomlscan.Scan([]byte(src))
		if err != nil {
			t.Fatalf("go-toml reads it, Scan does not: %v", err)
		}
		prevEnd := 0
		for _, s := range stmts {
			if s.Start < prevEnd || s.End < s.Start || s.End > len(src) {
				t.Fatalf("statement %q at %d..%d after one ending at %d", s.Key, s.Start, s.End, prevEnd)
			}
			prevEnd = s.End
			if s.Kind != tomlscan.KeyValue || s.InArrayTable {
				continue
			}
			edited := src[:s.ValStart] + `"§"` + src[s.ValEnd:]
			var m map[string]any
			if err := toml.Unmarshal([]byte(edited), &m); err != nil {
				t.Fatalf("replacing %q's value %q: %v\n%s", s.Key, src[s.ValStart:s.ValEnd], err, edited)
			}
			var path []string
			if s.Table != "" {
				path = append(path, tablePath(stmts, s)...)
			}
			v := any(m)
			for _, k := range append(path, s.Path...) {
				mm, ok := v.(map[string]any)
				if !ok {
					t.Fatalf("no %q in the edited document", s.Key)
				}
				v = mm[k]
			}
			if v != "§" {
				t.Fatalf("%q is %v after the edit, want §\n%s", strings.Join(append(path, s.Path...), "."), v, edited)
			}
		}
	})
}

// tablePath is the path of the table header s is under.
func tablePath(stmts []tomlscan.Statement, s tomlscan.Statement) []string {
	var path []string
	for _, h := range stmts {
		if h.Start >= s.Start {
			break
		}
		if h.Kind == tomlscan.Table {
			path = h.Path
		}
	}
	return path
}
