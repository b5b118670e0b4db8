package trayapp

import (
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// The tray's question warns, as the server's does, of each entry that
// reaches the person's own machine or network, or many hosts, and its
// Always saves only the others.
func TestAskWarnings(t *testing.T) {
	q := state.Question{Entries: []string{"pypi.org:443", "127.0.0.1:18099", "*.evil.test", "169.254.169.254:80", "10.0.0.5:2375"}}
	warnings, saved := askWarnings(q)
	if saved != "pypi.org:443" {
		t.Errorf("saved %q, want only pypi.org:443", saved)
	}
	if len(warnings) != 4 {
		t.Fatalf("warnings %q, want one for each of the four risky entries", warnings)
	}
	for i, want := range []string{"127.0.0.1:18099", "*.evil.test", "169.254.169.254:80", "10.0.0.5:2375"} {
		if !strings.HasPrefix(warnings[i], "⚠ "+want+": ") {
			t.Errorf("warning %d = %q, want it about %s", i, warnings[i], want)
		}
	}
	if w, s := askWarnings(state.Question{Entries: []string{"pypi.org:443", "files.pythonhosted.org:443"}}); len(w) != 0 || s != "pypi.org:443, files.pythonhosted.org:443" {
		t.Errorf("ordinary names: warnings %q, saved %q", w, s)
	}
}

// The notification says the same: the warnings, and what Always saves.
func TestAskBody(t *testing.T) {
	q := state.Question{SandboxID: "3f2a9c01deadbeef", Client: "Claude", Language: "python", Entries: []string{"127.0.0.1:18099"}}
	body := askBody(q)
	if !strings.Contains(body, "⚠ 127.0.0.1:18099: ") || !strings.HasSuffix(body, "Always saves nothing; the rest is for this sandbox only.") {
		t.Errorf("body %q", body)
	}
	q.Entries = []string{"pypi.org:443"}
	if got := askBody(q); got != askText(q) {
		t.Errorf("an ordinary name's body %q, want just %q", got, askText(q))
	}
}
