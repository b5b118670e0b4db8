package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pelletier/go-toml/v2"
)

// TestReadmeConfigIsTheDefaults: the configuration block of
// docs/configuration.md, pasted as it stands into a config file, is valid and changes
// nothing: every value it shows is the built-in default, and the deny
// lists it shows empty add to the built-in ones.
func TestReadmeConfigIsTheDefaults(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := firstBlock(t, string(data), "```toml\n[backend]")
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatalf("docs/configuration.md's configuration block does not load: %v\n%s", err, block)
	}
	got.Source = ""
	if diff := cmp.Diff(Default(), got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("docs/configuration.md's configuration block differs from the defaults (-defaults +docs):\n%s", diff)
	}
}

// TestDocsConfigHasEveryKey: the block of docs/configuration.md shows
// every key of every table (the [languages] tables are examples, not
// keys), so a key added to Config is added to the docs too.
func TestDocsConfigHasEveryKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	var shown map[string]map[string]any
	if err := toml.Unmarshal([]byte(firstBlock(t, string(data), "```toml\n[backend]")), &shown); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for table, keys := range shown {
		for key := range keys {
			got = append(got, table+"."+key)
		}
	}
	tables := reflect.TypeFor[Config]()
	for i := range tables.NumField() {
		f := tables.Field(i)
		table := strings.Split(f.Tag.Get("toml"), ",")[0]
		if table == "-" || table == "languages" {
			continue
		}
		for j := range f.Type.NumField() {
			want = append(want, table+"."+strings.Split(f.Type.Field(j).Tag.Get("toml"), ",")[0])
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys of docs/configuration.md's block (-Config +docs):\n%s", diff)
	}
}

// firstBlock returns the fenced block of doc that starts with start
// (its opening fence included), without its fences.
func firstBlock(t *testing.T, doc, start string) string {
	t.Helper()
	i := strings.Index(doc, start)
	if i < 0 {
		t.Fatalf("no block starting %q", start)
	}
	body := doc[i+strings.Index(doc[i:], "\n")+1:]
	end := strings.Index(body, "\n```")
	if end < 0 {
		t.Fatalf("the block starting %q is not closed", start)
	}
	return body[:end+1]
}

// A character the TOML parser does not expect is named whole, with its
// line: the README's old "…" placeholder read as U+00E2 'â'.
func TestParseNamesWholeCharacter(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"[files]\nread_deny = [\"~/.ssh\", …]\n", `c.toml:2: unexpected character '…' (U+2026)`},
		{"[files]\nread_deny = [\"~/.ssh\", \xff]\n", `c.toml:2: unexpected byte that is not UTF-8`},
		{"[files]\nread_deny = [\"~/.ssh\", ?]\n", `c.toml:2: unexpected character U+003F '?'`},
	} {
		_, err := Parse("c.toml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.data, err, tc.want)
		}
	}
}
