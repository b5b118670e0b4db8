package mcpserver

import (
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// trayPoll is how often a server looks for the tray's answer.
const trayPoll = 100 * time.Millisecond

// maxTrayQuestions bounds a server's questions waiting in the tray at
// once, so a sandbox that tries many hosts cannot bury the person in
// notifications (each sandbox's proxy already asks once per host:port).
const maxTrayQuestions = 4

// askTray puts the question to the tray of this installation, when one
// listens (state.AskListening), and waits for the person's answer until
// the timeout: a question file in the state directory's asks folder, the
// answer file the tray writes. Anything but a well-formed allow or
// always for this very question is answerDeny (or answerNone when no
// tray listens or nobody answered in time). Nothing but the timeout
// shortens the wait: the proxy remembers the answer for the client's
// retry, as with elicitation.
func (a *Asker) askTray(q state.Question) answer {
	st := a.o.State
	if st == nil || !st.AskListening() {
		return answerNone
	}
	select {
	case a.trayAsking <- struct{}{}:
		defer func() { <-a.trayAsking }()
	default:
		a.o.Log.Warn("too many questions wait for the person in the tray; refused without asking", "max", maxTrayQuestions, "entries", q.Entries)
		return answerNone
	}
	now := time.Now()
	q.ID, q.AskedAt, q.Deadline = state.NewAskID(), now, now.Add(a.o.Timeout)
	q.Client = printable.Clean(q.Client, printable.NameMax)
	q.Language = printable.Clean(q.Language, printable.NameMax)
	for i, e := range q.Entries {
		q.Entries[i] = printable.Clean(e, 300)
	}
	if err := st.PutQuestion(q); err != nil {
		a.o.Log.Warn("could not put the question to the tray", "err", err)
		return answerNone
	}
	defer st.DropQuestion(q.ID)
	t := time.NewTicker(trayPoll)
	defer t.Stop()
	for {
		ans, err := st.ReadAnswer(q)
		switch {
		case err != nil:
			a.o.Log.Warn("the tray's answer file is not an answer; refused, not taken as the person's no", "err", err)
			return answerNone
		case ans != nil:
			return trayAnswer(ans.Choice)
		case !time.Now().Before(q.Deadline):
			return answerNone
		}
		<-t.C
	}
}

func trayAnswer(choice string) answer {
	switch choice {
	case state.ChoiceAllow:
		return answerAllow
	case state.ChoiceAlways:
		return answerAlways
	}
	return answerDeny
}
