package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// AskRequest is what a sandbox wants to reach and whose sandbox it is: the
// engine's, so Asker.Ask is the engine's Options.Ask.
type AskRequest = sandbox.AskRequest

// DefaultAskTimeout is how long a person has to answer; then it is Deny.
const DefaultAskTimeout = 60 * time.Second

// AskerOptions configures an Asker.
type AskerOptions struct {
	// ConfigPath is the config file "Always allow" adds the entry to.
	ConfigPath string
	// Timeout bounds each question (0: DefaultAskTimeout).
	Timeout time.Duration
	// State, when set, lets the Asker ask through the tray of this
	// installation (ask_tray.go) when the client cannot be asked.
	State *state.Store
	Log   *slog.Logger
}

// Asker asks the person at the keyboard, never the AI, whether a sandbox
// may reach a host no entry allows: through MCP elicitation, in the
// session of the client the sandbox belongs to (the most recent session
// of that client name that declared the elicitation capability), else,
// when a tray of this installation listens, through the tray. Any
// answer other than a person's explicit yes is Deny: decline, cancel,
// no answer within the timeout, no session that can be asked, an error.
// Give it to New (Options.Asker), which tells it about sessions.
type Asker struct {
	o  AskerOptions
	mu sync.Mutex
	// sessions are the sessions by client name, most recent last.
	sessions map[string][]server.ClientSession
	// creators are the sessions that created each sandbox (while they last).
	creators map[string]server.ClientSession
	// saveMu serializes "Always" edits of the config file.
	saveMu sync.Mutex
	// trayAsking holds a token per question waiting in the tray.
	trayAsking chan struct{}
	// open are the sandboxes with a question waiting (one at a time);
	// declined the hosts a person declined, per sandbox (never asked
	// again for it).
	open     map[string]bool
	declined map[string]map[string]bool
	// rates are the questions each client may still ask (ask_rate.go).
	rates map[string]*askBucket
}

// NewAsker returns an Asker; it asks nobody until New has been given it.
func NewAsker(o AskerOptions) *Asker {
	if o.Timeout <= 0 {
		o.Timeout = DefaultAskTimeout
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Asker{o: o, sessions: map[string][]server.ClientSession{}, creators: map[string]server.ClientSession{},
		trayAsking: make(chan struct{}, maxTrayQuestions), open: map[string]bool{}, declined: map[string]map[string]bool{},
		rates: map[string]*askBucket{}}
}

// addHooks tells a about each session that initializes and ends.
func (a *Asker) addHooks(h *server.Hooks) {
	h.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		// An HTTP session lives for one request: a question sent to it
		// later would wait for nobody.
		if sess := server.ClientSessionFromContext(ctx); sess != nil && !overHTTP(ctx) {
			a.remember(clientName(ctx), sess)
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) { a.forget(sess) })
}

func (a *Asker) remember(client string, sess server.ClientSession) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dropLocked(sess)
	a.sessions[client] = append(a.sessions[client], sess)
}

func (a *Asker) forget(sess server.ClientSession) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dropLocked(sess)
}

// created notes that sess created sandbox id: its people are asked first.
func (a *Asker) created(id string, sess server.ClientSession) {
	if a == nil || sess == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.creators) < maxCreators {
		a.creators[id] = sess
	}
}

// maxCreators bounds the sandboxes whose creating session is kept.
const maxCreators = 4096

func (a *Asker) dropLocked(sess server.ClientSession) {
	for id, s := range a.creators {
		if s.SessionID() == sess.SessionID() {
			delete(a.creators, id)
		}
	}
	for name, list := range a.sessions {
		kept := list[:0]
		for _, s := range list {
			if s.SessionID() != sess.SessionID() {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			delete(a.sessions, name)
		} else {
			a.sessions[name] = kept
		}
	}
}

// session is the session to ask about sandbox id of client: the one
// that created it, else the most recent one of that client, if it can
// be asked.
func (a *Asker) session(id, client string) server.SessionWithElicitation {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := canElicit(a.creators[id]); e != nil {
		return e
	}
	list := a.sessions[client]
	for i := len(list) - 1; i >= 0; i-- {
		if e := canElicit(list[i]); e != nil {
			return e
		}
	}
	return nil
}

// canElicit is sess if its client declared the elicitation capability.
func canElicit(sess server.ClientSession) server.SessionWithElicitation {
	e, ok := sess.(server.SessionWithElicitation)
	info, hasInfo := sess.(server.SessionWithClientInfo)
	if ok && hasInfo && info.GetClientCapabilities().Elicitation != nil {
		return e
	}
	return nil
}

// Ask is the engine's Ask (sandbox.Options.Ask): it asks the person
// whether req's sandbox may reach req.Host:req.Port and waits at most
// the timeout, even when ctx ends sooner. It returns netproxy.Allow only
// for a person's yes, netproxy.Declined for their no (and, without
// asking, for a host they declined for this sandbox before), an error
// while another question about the sandbox waits, and netproxy.Deny
// otherwise.
func (a *Asker) Ask(ctx context.Context, req AskRequest) (netproxy.Decision, error) {
	entry := net.JoinHostPort(req.Host, strconv.Itoa(req.Port))
	if a.wasDeclined(req.SandboxID, req.Host) {
		return netproxy.Declined, nil
	}
	if !a.take(req.SandboxID) {
		return netproxy.Deny, errors.New("another question about this sandbox waits for the person's answer; try again after it")
	}
	defer a.give(req.SandboxID)
	if !a.allowQuestion(req.Client) {
		return netproxy.Deny, errors.New("this client's sandboxes asked the person too many questions lately; try again in a minute")
	}
	msg := fmt.Sprintf("Sandbox %s (%s, %s) wants to reach %s.", shortID(req.SandboxID),
		printable.Clean(req.Language, printable.NameMax), printable.Clean(req.Client, printable.NameMax),
		printable.Clean(entry, 300))
	if e, err := netproxy.ParseEntry(entry); err == nil && netproxy.Risk(e) != "" {
		msg += "\n⚠ " + netproxy.Risk(e) + ". Allowed for this sandbox only, even with \"Always\"."
	}
	// The question outlives the connection that raised it (a client's own
	// timeout is often shorter than a person's): the proxy remembers the
	// answer for the retry. The timeout and the session's end bound it.
	ans := answerNone
	if sess := a.session(req.SandboxID, req.Client); sess != nil {
		ans = a.elicit(context.WithoutCancel(ctx), sess, msg)
	} else {
		ans = a.askTray(state.Question{SandboxID: req.SandboxID, Client: req.Client, Language: req.Language, Entries: []string{entry}})
	}
	a.o.Log.Info("asked a person about a host", "sandbox", req.SandboxID, "host", entry, "answer", ans)
	switch ans {
	case answerAllow:
		return netproxy.Allow, nil
	case answerAlways:
		a.saveAlways([]string{entry})
		return netproxy.Allow, nil
	case answerDeny:
		a.decline(req.SandboxID, req.Host)
		return netproxy.Declined, nil
	}
	return netproxy.Deny, nil
}

// maxDeclinedSandboxes bounds the sandboxes whose declined hosts are kept.
const maxDeclinedSandboxes = 4096

func (a *Asker) wasDeclined(id, host string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.declined[id][host]
}

func (a *Asker) decline(id, host string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.declined[id] == nil {
		if len(a.declined) >= maxDeclinedSandboxes {
			return
		}
		a.declined[id] = map[string]bool{}
	}
	if len(a.declined[id]) < maxDeclinedSandboxes {
		a.declined[id][host] = true
	}
}

// take marks a question about sandbox id open, or reports that one is.
func (a *Asker) take(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.open[id] {
		return false
	}
	a.open[id] = true
	return true
}

func (a *Asker) give(id string) {
	a.mu.Lock()
	delete(a.open, id)
	a.mu.Unlock()
}

// saveAlways adds to the config the entries a person always allowed,
// but never one Risk warns about: those a person adds by hand.
func (a *Asker) saveAlways(entries []string) {
	var keep []string
	for _, s := range entries {
		if e, err := netproxy.ParseEntry(s); err == nil && netproxy.Risk(e) == "" {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return
	}
	if err := a.addAlways(keep...); err != nil {
		a.o.Log.Warn("could not add the entries a person always allowed to the config; allowed for this sandbox only", "entries", keep, "err", err)
	}
}

func shortID(id string) string {
	id = printable.Clean(id, printable.NameMax)
	if r := []rune(id); len(r) > 8 {
		return string(r[:8]) + "…"
	}
	return id
}

// AskEntries asks the person behind the calling session (ctx is a
// sandbox_create call's) once, for the whole list, whether a new sandbox
// of language may reach entries that network.allow_domains does not
// cover (through the tray when the client cannot elicit). Entries that
// reach the person's own machine or network, and wildcards, are listed
// apart, each with its warning. Allow means for that sandbox only; the
// person's "Always" also adds the other entries to the config file. With
// neither an elicitation capability nor a listening tray it is Deny: the
// caller keeps its refusal.
func (a *Asker) AskEntries(ctx context.Context, language string, entries []string) (netproxy.Decision, error) {
	clean := make([]string, len(entries))
	for i, e := range entries {
		clean[i] = printable.Clean(e, 300)
	}
	if !a.allowQuestion(clientName(ctx)) {
		return netproxy.Deny, errors.New("this client asked the person too many questions lately; try again in a minute")
	}
	msg := entriesQuestion(clientName(ctx), printable.Clean(language, printable.NameMax), clean)
	ans := answerNone
	if sess := canElicit(server.ClientSessionFromContext(ctx)); sess != nil && !overHTTP(ctx) {
		ans = a.elicit(ctx, sess, msg)
	} else {
		ans = a.askTray(state.Question{Client: clientName(ctx), Language: language, Entries: slices.Clone(entries)})
	}
	a.o.Log.Info("asked a person about a new sandbox's hosts", "entries", clean, "answer", ans)
	switch ans {
	case answerAllow:
		return netproxy.Allow, nil
	case answerAlways:
		a.saveAlways(entries)
		return netproxy.Allow, nil
	case answerDeny:
		return netproxy.Declined, nil
	}
	return netproxy.Deny, nil
}

// entriesQuestion is the question about a new sandbox's entries: the
// ordinary ones in a line, then each that reaches the person's own
// machine or network (or is a wildcard) on a line of its own with its
// warning.
func entriesQuestion(client, language string, entries []string) string {
	var plain, risky []string
	for _, s := range entries {
		e, err := netproxy.ParseEntry(s)
		if err != nil || netproxy.Risk(e) == "" {
			plain = append(plain, s)
			continue
		}
		risky = append(risky, "⚠ "+s+": "+netproxy.Risk(e)+".")
	}
	if len(risky) == 0 {
		return fmt.Sprintf("%s asks for a new %s sandbox that may reach %s.", client, language, strings.Join(plain, ", "))
	}
	msg := fmt.Sprintf("%s asks for a new %s sandbox", client, language)
	if len(plain) > 0 {
		msg += " that may reach " + strings.Join(plain, ", ") + ","
	}
	return msg + " and these, allowed for this sandbox only (\"Always\" never saves them):\n" + strings.Join(risky, "\n")
}
