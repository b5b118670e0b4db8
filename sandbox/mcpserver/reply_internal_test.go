package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// fitText keeps whole characters whose JSON string, at its longest
// escapes, fits the budget.
func TestFitText(t *testing.T) {
	for _, s := range []string{"plain ascii", "<>&\"\\\n\x01", "héllo wörld ✓", "\u2028x\xffy", strings.Repeat("<a>", 100)} {
		for budget := 0; budget < 80; budget++ {
			n := fitText([]byte(s), budget)
			b, _ := json.Marshal(strings.ToValidUTF8(s[:n], "\uFFFD"))
			if len(b)-2 > budget {
				t.Errorf("fitText(%q, %d) = %d: %d bytes of JSON", s, budget, n, len(b)-2)
			}
			if n < len(s) && !utf8.RuneStart(s[n]) {
				t.Errorf("fitText(%q, %d) cut a character", s, budget)
			}
		}
		if n := fitText([]byte(s), 6*len(s)); n != len(s) {
			t.Errorf("fitText(%q) cut %d of %d with room for all", s, n, len(s))
		}
	}
}
