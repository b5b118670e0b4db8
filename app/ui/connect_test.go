package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// "Connect a client" copies the MCP config for stdio (the bundled
// server's absolute path) and, with the HTTP server on, for HTTP (the URL
// and the token); it fits 800×560.
func TestConnectCardCopiesConfig(t *testing.T) {
	w, _ := newWindow(t)
	w.Status.Set(statusInfo())
	w.Window().Resize(fyne.NewSize(800, 560))
	buttons := map[string]*widget.Button{}
	walk(w.Window().Canvas().Content(), func(o any) {
		if b, ok := o.(*widget.Button); ok {
			buttons[b.Text] = b
		}
	})
	for _, tc := range []struct{ button, want string }{
		{"Copy stdio config", `"command": "/opt/mcp-sandbox/mcp-sandbox"`},
		{"Copy HTTP config (URL and token)", `"Authorization": "Bearer 0123456789abcdef0123456789abcdef"`},
	} {
		b := buttons[tc.button]
		if b == nil {
			t.Fatalf("no %q button", tc.button)
		}
		test.Tap(b)
		if got := fyne.CurrentApp().Clipboard().Content(); !strings.Contains(got, tc.want) {
			t.Errorf("%s copied %q, want it to hold %q", tc.button, got, tc.want)
		}
	}
	w.Status.content.ScrollToBottom()
	checkNothingCut(t, "connect", w.Window().Canvas().Content())
	if shots := os.Getenv("MCP_SANDBOX_SCREENSHOT_DIR"); shots != "" {
		writePNG(t, w.Window().Canvas(), filepath.Join(shots, "status-connect-800x560.png"))
	}
}
