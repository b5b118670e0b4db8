package trayapp

import (
	"strings"
	"testing"
	"unicode/utf16"
)

// fromUTF16 reads a NUL-terminated field back, failing on a missing NUL.
func fromUTF16(t *testing.T, f []uint16) string {
	t.Helper()
	for i, u := range f {
		if u == 0 {
			return string(utf16.Decode(f[:i]))
		}
	}
	t.Fatalf("field of %d units has no terminating NUL", len(f))
	return ""
}

func TestBalloonText(t *testing.T) {
	// A notification the tray sends, as it is: title and body whole.
	msg := "MCP Sandbox 1.4.0 is available: choose “Install 1.4.0” in the tray menu."
	title, body := balloonText("MCP Sandbox", msg)
	if got := fromUTF16(t, title[:]); got != "MCP Sandbox" {
		t.Errorf("title = %q", got)
	}
	if got := fromUTF16(t, body[:]); got != msg {
		t.Errorf("body = %q, want %q", got, msg)
	}

	// A NUL inside would end the text there: it becomes a space.
	_, body = balloonText("MCP Sandbox", "Docker is not reachable: a\x00b")
	if got := fromUTF16(t, body[:]); got != "Docker is not reachable: a b" {
		t.Errorf("body with NUL = %q", got)
	}
}

func TestBalloonTextTooLong(t *testing.T) {
	cases := []struct {
		name, in string
		want     string
	}{
		// Exactly 255 units fit, with the NUL.
		{"fits exactly", strings.Repeat("a", 255), strings.Repeat("a", 255)},
		// One more: cut to 254 and "…".
		{"one too many", strings.Repeat("a", 256), strings.Repeat("a", 254) + "…"},
		// A character outside the BMP is two units; it is never split.
		{"surrogate pair at the cut", strings.Repeat("a", 253) + "😀" + "bbb", strings.Repeat("a", 253) + "…"},
		{"surrogate pair fits", strings.Repeat("a", 252) + "😀" + "bbb", strings.Repeat("a", 252) + "😀" + "…"},
		{"surrogate pair last", strings.Repeat("a", 253) + "😀", strings.Repeat("a", 253) + "😀"},
		// Invalid UTF-8 shows as U+FFFD.
		{"invalid UTF-8", "bad \xff byte", "bad \uFFFD byte"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, body := balloonText("MCP Sandbox", c.in)
			got := fromUTF16(t, body[:])
			if got != c.want {
				t.Errorf("got %q (%d units), want %q", got, len(utf16.Encode([]rune(got))), c.want)
			}
			if n := len(utf16.Encode([]rune(got))); n > balloonBodyLen-1 {
				t.Errorf("%d units, more than the field's %d", n, balloonBodyLen-1)
			}
		})
	}

	// The title field is 64 units.
	title, _ := balloonText(strings.Repeat("T", 100), "x")
	if got := fromUTF16(t, title[:]); got != strings.Repeat("T", 62)+"…" {
		t.Errorf("long title = %q", got)
	}
}
