package ui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"fyne.io/fyne/v2/widget"
)

// cleanText makes text a sandbox produced (a transcript, a file name, an
// error quoting either) safe to show as text: line feeds stay, a tab
// becomes spaces, every other control or format character (ESC, CR, C1,
// bidi overrides, zero-width ones, line and paragraph separators) is
// dropped and invalid UTF-8 becomes U+FFFD. maxBytes > 0 keeps at most
// that many bytes of the result (whole runes), ending it with "…".
func cleanText(s string, maxBytes int) string {
	var b strings.Builder
	b.Grow(min(len(s), 1<<20))
	for _, r := range s { // invalid UTF-8 arrives as utf8.RuneError
		switch {
		case r == '\n':
		case r == '\t':
			b.WriteString("    ")
			continue
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.In(r, unicode.Zl, unicode.Zp):
			continue
		}
		if maxBytes > 0 && b.Len()+utf8.RuneLen(r) > maxBytes {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// prose is s wrapped, its `code` spans shown without their backticks
// (the doctor's sentences mark commands and settings so; a label does not
// read Markdown, and a rich text of mixed styles wraps a word after a
// code span letter by letter). An unpaired backtick stays.
func prose(s string) *widget.Label {
	if n := strings.Count(s, "`"); n >= 2 {
		if n%2 == 1 { // keep the last, unpaired one
			i := strings.LastIndex(s, "`")
			s = strings.ReplaceAll(s[:i], "`", "") + s[i:]
		} else {
			s = strings.ReplaceAll(s, "`", "")
		}
	}
	return wrapped(s)
}
