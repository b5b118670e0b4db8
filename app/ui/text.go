package ui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"fyne.io/fyne/v2"
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

// prose is s wrapped, its `code` spans shown in the code style rather
// than with their backticks (s is not read as Markdown otherwise: a
// client's or an engine's words cannot format it).
func prose(s string) fyne.CanvasObject {
	if strings.Count(s, "`") < 2 {
		return wrapped(s)
	}
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unpaired backtick stays as it is
		parts[len(parts)-2] += "`" + parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	var segs []widget.RichTextSegment
	for i, p := range parts {
		style := widget.RichTextStyleInline
		if i%2 == 1 {
			style = widget.RichTextStyleCodeInline
		}
		if p != "" {
			segs = append(segs, &widget.TextSegment{Text: p, Style: style})
		}
	}
	r := widget.NewRichText(segs...)
	r.Wrapping = fyne.TextWrapWord
	return r
}
