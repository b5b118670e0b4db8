package trayapp

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// A server whose client cannot be asked puts its question to the tray
// (state/asks.go): the tray holds the listener lock while it runs, shows
// each question as a notification with Allow, Always allow and Deny
// actions where the desktop has them (Linux) and as an item of its menu
// everywhere, and writes the person's answer. "Always" is written as
// such: the asking server adds the entry to the config file it uses.

// askRecheck is how often the folder is swept of what nobody will read
// (state.SweepAsks) and the questions read again without a change in it:
// a live server removes its question at its deadline, which the watch
// sees, so this only catches a server that died waiting, and an idle
// tray wakes up for it rarely.
const askRecheck = 30 * time.Second

// listenAsks shows the servers' questions until ctx is done.
func (a *App) listenAsks(ctx context.Context) {
	l, err := a.st.ListenAsks()
	if err != nil {
		a.log.Warn("servers cannot ask the person through the tray", "err", err)
		return
	}
	defer l.Close()
	a.asks = newAskNotifier(ctx, a.log, func(id, choice string) { a.answer(id, choice) })
	defer a.asks.closeAll()
	a.refreshAsks()
	go func() {
		t := time.NewTicker(askRecheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				a.st.SweepAsks(time.Now())
				a.refreshAsks()
			}
		}
	}()
	if err := dirwatch.Watch(ctx, filepath.Join(a.st.Dir(), state.AsksDir), 50*time.Millisecond, a.refreshAsks); err != nil {
		a.log.Warn("watch the asks folder; questions are read every few seconds", "err", err)
		<-ctx.Done()
	}
}

// askState is what the tray knows of the questions, beyond the menu's
// list: those answered here (their files last until the server reads
// the answer) are not shown again.
type askState struct {
	mu       sync.Mutex // serializes refreshAsks and answer
	answered map[string]bool
}

// refreshAsks reads the pending questions, notifies the new ones,
// withdraws the notifications of those gone and redraws the menu.
func (a *App) refreshAsks() {
	a.askSt.mu.Lock()
	defer a.askSt.mu.Unlock()
	all := a.st.Questions(time.Now())
	qs := make([]state.Question, 0, len(all))
	live := map[string]bool{}
	for _, q := range all {
		live[q.ID] = true
		if !a.askSt.answered[q.ID] {
			qs = append(qs, q)
		}
	}
	for id := range a.askSt.answered {
		if !live[id] {
			delete(a.askSt.answered, id)
		}
	}
	a.mu.Lock()
	old := a.s.questions
	a.s.questions = qs
	a.mu.Unlock()
	for _, q := range qs {
		if !slices.ContainsFunc(old, func(o state.Question) bool { return o.ID == q.ID }) {
			a.log.Info("a server asks the person", "question", q.ID, "sandbox", q.SandboxID, "entries", q.Entries)
			a.asks.show(q.ID, "MCP Sandbox: allow a connection?", askBody(q))
		}
	}
	for _, o := range old {
		if !slices.ContainsFunc(qs, func(q state.Question) bool { return q.ID == o.ID }) {
			a.asks.withdraw(o.ID)
		}
	}
	a.redraw()
}

// answer writes the person's choice for question id, once.
func (a *App) answer(id, choice string) {
	a.askSt.mu.Lock()
	defer a.askSt.mu.Unlock()
	a.mu.Lock()
	i := slices.IndexFunc(a.s.questions, func(q state.Question) bool { return q.ID == id })
	if i >= 0 {
		a.s.questions = slices.Delete(slices.Clone(a.s.questions), i, i+1)
	}
	a.mu.Unlock()
	a.asks.withdraw(id)
	if i < 0 {
		return // answered already, or gone
	}
	if a.askSt.answered == nil {
		a.askSt.answered = map[string]bool{}
	}
	a.askSt.answered[id] = true
	if err := a.st.PutAnswer(state.Answer{ID: id, Choice: choice, AnsweredAt: time.Now()}); err != nil {
		a.log.Warn("answer a server's question", "question", id, "err", err)
	} else {
		a.log.Info("the person answered", "question", id, "choice", choice)
	}
	a.redraw()
}

// askText names the sandbox (short id, language, client) and what it
// wants; every name in it is cleaned of control and bidi characters.
func askText(q state.Question) string {
	lang := printable.Clean(q.Language, printable.NameMax)
	client := printable.Clean(q.Client, printable.NameMax)
	if q.SandboxID == "" {
		return fmt.Sprintf("%s asks for a new %s sandbox that may reach %s.", client, lang, askEntries(q))
	}
	return fmt.Sprintf("Sandbox %s (%s, %s) wants to reach %s.", shortSandboxID(q.SandboxID), lang, client, askEntries(q))
}

func askEntries(q state.Question) string {
	clean := make([]string, 0, len(q.Entries))
	for _, e := range q.Entries {
		clean = append(clean, printable.Clean(e, 300))
	}
	return strings.Join(clean, ", ")
}

// askBody is a question's notification text: who asks for what, then a
// line for each entry that reaches the person's own machine or network,
// and what an "Always" would save.
func askBody(q state.Question) string {
	warnings, saved := askWarnings(q)
	if len(warnings) == 0 {
		return askText(q)
	}
	if saved == "" {
		saved = "nothing"
	}
	return askText(q) + "\n" + strings.Join(warnings, "\n") + "\nAlways saves " + saved + "; the rest is for this sandbox only."
}

// askWarnings is a warning line for each entry that reaches the person's
// own machine or network, or many hosts (netproxy.Risk, the rule the
// server's own question follows), and the other entries, which alone an
// "Always" saves.
func askWarnings(q state.Question) (warnings []string, saved string) {
	var plain []string
	for _, s := range q.Entries {
		name := printable.Clean(s, 300)
		if e, err := netproxy.ParseEntry(s); err == nil {
			if risk := netproxy.Risk(e); risk != "" {
				warnings = append(warnings, "⚠ "+name+": "+risk)
				continue
			}
		}
		plain = append(plain, name)
	}
	return warnings, strings.Join(plain, ", ")
}

func shortSandboxID(id string) string {
	id = printable.Clean(id, printable.NameMax)
	if r := []rune(id); len(r) > 8 {
		return string(r[:8]) + "…"
	}
	return id
}

// menuQuestions is the menu's view of the questions.
func menuQuestions(qs []state.Question) []traymenu.Question {
	out := make([]traymenu.Question, 0, len(qs))
	for _, q := range qs {
		warnings, saved := askWarnings(q)
		out = append(out, traymenu.Question{ID: q.ID, Text: askText(q), Entries: askEntries(q), Warnings: warnings, Saved: saved})
	}
	return out
}
