package trayapp

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// askAsServer puts a question to the tray as a server does and returns
// it.
func askAsServer(t *testing.T, st *state.Store, sandbox, host string) state.Question {
	t.Helper()
	now := time.Now()
	q := state.Question{ID: state.NewAskID(), SandboxID: sandbox, Client: "Claude Desktop", Language: "python",
		Entries: []string{host}, AskedAt: now, Deadline: now.Add(time.Minute)}
	if err := st.PutQuestion(q); err != nil {
		t.Fatal(err)
	}
	return q
}

// waitAnswer waits for the tray's answer to q.
func waitAnswer(t *testing.T, st *state.Store, q state.Question) string {
	t.Helper()
	var got *state.Answer
	waitFor(t, "the tray's answer to "+q.Entries[0], 15*time.Second, func() bool {
		a, err := st.ReadAnswer(q)
		if err != nil {
			t.Fatal(err)
		}
		got = a
		return a != nil
	})
	return got.Choice
}

// TestAskOverNotifications: a server's question is a notification that
// names the sandbox (short id, language, client) and the host, with the
// actions allow, always and deny; the action a person invokes is the
// answer the server reads. A question withdrawn by its server closes its
// notification.
func TestAskOverNotifications(t *testing.T) {
	skipUnderRace(t)
	d := startDesktop(t)
	p, _ := d.startTray(t, nil, "--hidden")
	st, err := state.Open(filepath.Join(p.home, ".local", "state", "mcp-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tray to listen for questions", 15*time.Second, st.AskListening)
	wantActions := []string{"allow", "Allow", "always", "Always allow", "deny", "Deny"}
	for i, choice := range []string{state.ChoiceAllow, state.ChoiceAlways, state.ChoiceDeny} {
		host := []string{"pypi.org:443", "files.example:443", "evil.example:80"}[i]
		q := askAsServer(t, st, "3f2a9c01deadbeef", host)
		text := "Sandbox 3f2a9c01… (python, Claude Desktop) wants to reach " + host + "."
		d.waitNote(t, "the question's notification", text)
		id, actions, _ := d.notes.find(text)
		if !slices.Equal(actions, wantActions) {
			t.Errorf("actions %q, want %q", actions, wantActions)
		}
		if err := d.notes.invoke(id, choice); err != nil {
			t.Fatal(err)
		}
		if got := waitAnswer(t, st, q); got != choice {
			t.Errorf("answer %q, want %q", got, choice)
		}
		st.DropQuestion(q.ID) // the server has read it
	}
	// Names a client or sandbox chose are shown cleaned: no escape
	// sequence or bidi override reaches the desktop.
	now := time.Now()
	hostile := state.Question{ID: state.NewAskID(), SandboxID: "\u202e9c01", Client: "Claude\x1b[2J Desktop", Language: "py\x07",
		Entries: []string{"x.example:443\x1b]8;;https://evil\x07"}, AskedAt: now, Deadline: now.Add(time.Minute)}
	if err := st.PutQuestion(hostile); err != nil {
		t.Fatal(err)
	}
	d.waitNote(t, "the hostile question's notification", "x.example:443")
	for _, n := range d.notes.all() {
		if strings.ContainsAny(n, "\x1b\x07\u202e") {
			t.Errorf("a notification carries control or bidi characters: %q", n)
		}
	}
	q := askAsServer(t, st, "77aa", "gone.example:443")
	d.waitNote(t, "the question's notification", "gone.example:443")
	st.DropQuestion(q.ID) // its deadline passed
	waitFor(t, "the withdrawn question's notification to close", 15*time.Second, func() bool {
		_, _, closed := d.notes.find("gone.example:443")
		return closed
	})
}

// TestAskInMenu: where notifications carry no actions the menu asks:
// the item appears with the question while it waits, each choice answers
// it, and the item goes once nothing waits.
func TestAskInMenu(t *testing.T) {
	skipUnderRace(t)
	d := startDesktop(t)
	p, m := d.startTray(t, nil, "--hidden")
	st, err := state.Open(filepath.Join(p.home, ".local", "state", "mcp-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tray to listen for questions", 15*time.Second, st.AskListening)
	for _, tc := range []struct{ choice, label string }{
		{state.ChoiceAlways, "Always allow a.example:443"},
		{state.ChoiceDeny, "Deny b.example:443"},
		{state.ChoiceAllow, "Allow c.example:8443 for this sandbox"},
	} {
		host := map[string]string{"always": "a.example:443", "deny": "b.example:443", "allow": "c.example:8443"}[tc.choice]
		q := askAsServer(t, st, "3f2a9c01deadbeef", host)
		if _, err := m.waitMenu(15*time.Second, func(items []menuItem) bool {
			it, ok := questionsItem(items)
			return ok && it.Label == traymenu.LabelQuestions(1) && it.Visible && len(it.Children) >= 4 && it.Children[0].Label == "Sandbox 3f2a9c01… (python, Claude Desktop) wants to reach "+host+"." && !it.Children[0].Enabled
		}); err != nil {
			t.Fatal(err)
		}
		click(t, m, tc.label)
		if got := waitAnswer(t, st, q); got != tc.choice {
			t.Errorf("answer %q, want %q", got, tc.choice)
		}
		st.DropQuestion(q.ID)
		if _, err := m.waitMenu(15*time.Second, func(items []menuItem) bool {
			it, ok := questionsItem(items)
			return ok && !it.Visible
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// questionsItem is the menu's item for waiting questions.
func questionsItem(items []menuItem) (menuItem, bool) {
	for _, it := range items {
		if strings.HasSuffix(it.Label, " for your answer") {
			return it, true
		}
	}
	return menuItem{}, false
}
