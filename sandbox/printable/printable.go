package printable

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NameMax is the cap for a name: an MCP client's, a language's, a label
// value shown as one.
const NameMax = 64

// Clean returns s without control characters (C0, DEL, C1), format
// characters (Unicode Cf: bidi overrides and isolates, zero-width ones)
// and line or paragraph separators, with invalid UTF-8 replaced by U+FFFD,
// spaces trimmed at both ends, and at most maxRunes runes (the last one an
// ellipsis when it was cut). maxRunes <= 0 means no cap.
func Clean(s string, maxRunes int) string {
	if isClean(s, maxRunes) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // invalid UTF-8 arrives as utf8.RuneError
		if dropped(r) {
			continue
		}
		b.WriteRune(r)
	}
	out := strings.TrimSpace(b.String())
	if maxRunes > 0 && utf8.RuneCountInString(out) > maxRunes {
		rs := []rune(out)
		out = strings.TrimSpace(string(rs[:maxRunes-1])) + "…"
	}
	return out
}

// isClean is the fast path: s is valid, short enough, has nothing to drop
// and no spaces to trim.
func isClean(s string, maxRunes int) bool {
	if !utf8.ValidString(s) || (maxRunes > 0 && utf8.RuneCountInString(s) > maxRunes) || strings.TrimSpace(s) != s {
		return false
	}
	return strings.IndexFunc(s, dropped) < 0
}

func dropped(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Zl, unicode.Zp)
}

// Lines is Clean for text whose line breaks mean something (a command in
// the audit log): each line is cleaned (a carriage return, too, is
// dropped), the lines are kept, and the whole is capped at maxRunes.
func Lines(s string, maxRunes int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Clean(l, 0)
	}
	return capKeepingLines(strings.Join(lines, "\n"), maxRunes)
}

// capKeepingLines caps s at maxRunes runes, the last one an ellipsis when
// it was cut, and drops what Clean drops except line feeds.
func capKeepingLines(s string, maxRunes int) string {
	var b strings.Builder
	for _, r := range s {
		if r != '\n' && dropped(r) {
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if maxRunes > 0 && utf8.RuneCountInString(out) > maxRunes {
		rs := []rune(out)
		out = string(rs[:maxRunes-1]) + "…"
	}
	return out
}

// Text is Lines for text whose indentation means something (a diff): line
// feeds kept, a tab shown as four spaces, nothing trimmed; what Clean
// drops is dropped.
func Text(s string, maxRunes int) string {
	return capKeepingLines(strings.ReplaceAll(s, "\t", "    "), maxRunes)
}
