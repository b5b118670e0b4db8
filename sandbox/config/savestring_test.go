package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SaveString adds one line to the table that exists (or replaces the
// value where it stands), keeping every other byte; a file that does not
// parse (a second [images]) is left as it is.
func TestSaveStringKeepsTheRest(t *testing.T) {
	const before = `# mine
[images]
pull = "never" # offline

[limits]
cpus = 1.0
`
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	backup, err := SaveString(path, "images", "python", "mcp-sandbox-test/python:3")
	if err != nil {
		t.Fatal(err)
	}
	if old, _ := os.ReadFile(backup); string(old) != before {
		t.Errorf("the backup %q holds %q, want the file as it was", backup, old)
	}
	got, _ := os.ReadFile(path)
	want := strings.Replace(before, "# offline\n", "# offline\npython = \"mcp-sandbox-test/python:3\"\n", 1)
	if string(got) != want {
		t.Errorf("after SaveString:\n%s\nwant:\n%s", got, want)
	}
	if _, err := SaveString(path, "images", "python", "x:1"); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	if want = strings.Replace(want, "mcp-sandbox-test/python:3", "x:1", 1); string(got) != want {
		t.Errorf("replacing the value:\n%s\nwant:\n%s", got, want)
	}
	if c, err := Load(path); err != nil || c.Images.Python != "x:1" {
		t.Errorf("Load after SaveString: %v, %+v", err, c)
	}

	dup := before + "[images]\nbash = \"b\"\n"
	if err := os.WriteFile(path, []byte(dup), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := SaveString(path, "images", "python", "y:1"); !errors.Is(err, ErrNotSaved) {
		t.Errorf("SaveString on a file with two [images]: %v, want ErrNotSaved", err)
	}
	if got, _ = os.ReadFile(path); string(got) != dup {
		t.Errorf("a refused SaveString changed the file:\n%s", got)
	}
}
