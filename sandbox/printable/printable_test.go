package printable

import (
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"plain", "claude-ai", 64, "claude-ai"},
		{"unicode letters kept", "Zéd ✓ 客户端", 64, "Zéd ✓ 客户端"},
		{"ESC sequence", "evil\x1b[2J\x1b[31mred", 64, "evil[2J[31mred"},
		{"OSC title sequence", "a\x1b]0;pwned\x07b", 64, "a]0;pwnedb"},
		{"newline forging a row", "x\nabc123  python  FORGED", 64, "xabc123  python  FORGED"},
		{"carriage return", "good\rbad", 64, "goodbad"},
		{"tab shifting columns", "a\tb", 64, "ab"},
		{"C1 CSI", "a\u009b31mb", 64, "a31mb"},
		{"DEL", "a\x7fb", 64, "ab"},
		{"NUL", "a\x00b", 64, "ab"},
		{"bidi override", "abc\u202edcba", 64, "abcdcba"},
		{"zero-width joiner and isolates", "a\u200db\u2066c\u2069", 64, "abc"},
		{"line separator", "a\u2028b\u2029c", 64, "abc"},
		{"invalid UTF-8", "a\xffb", 64, "a\ufffdb"},
		{"trimmed", "  name \n", 64, "name"},
		{"capped", strings.Repeat("x", 100), 64, strings.Repeat("x", 63) + "…"},
		{"capped in runes", strings.Repeat("é", 70), 64, strings.Repeat("é", 63) + "…"},
		{"exactly the cap", strings.Repeat("y", 64), 64, strings.Repeat("y", 64)},
		{"no cap", strings.Repeat("z", 100), 0, strings.Repeat("z", 100)},
		{"only controls", "\x1b\n\t", 64, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in, tt.max); got != tt.want {
				t.Errorf("Clean(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

func TestLines(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"lines kept", "cd /tmp\nls -la", 300, "cd /tmp\nls -la"},
		{"controls dropped", "echo \x1b[2Jhi\r\nexit\t1", 300, "echo [2Jhi\nexit1"},
		{"capped", strings.Repeat("a\n", 10), 5, "a\na\n…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Lines(tt.in, tt.max); got != tt.want {
				t.Errorf("Lines(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"claude", "a\x1b[2Jb", "x\ny", "\u202e", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Clean(s, NameMax)
		if strings.IndexFunc(got, dropped) >= 0 || strings.ContainsRune(got, '\n') {
			t.Fatalf("Clean(%q) = %q keeps a control or format character", s, got)
		}
		if n := len([]rune(got)); n > NameMax {
			t.Fatalf("Clean(%q) has %d runes", s, n)
		}
		if Clean(got, NameMax) != got {
			t.Fatalf("Clean is not idempotent on %q", s)
		}
	})
}

// TestText: a diff keeps its lines and indentation (a tab as four
// spaces); escapes, bidi controls and carriage returns go.
func TestText(t *testing.T) {
	in := " ctx\n-\told\n+  new\x1b[2J\u202e\r\n"
	if got, want := Text(in, 0), " ctx\n-    old\n+  new[2J\n"; got != want {
		t.Errorf("Text(%q) = %q, want %q", in, got, want)
	}
}
