package mcpserver

import (
	"context"
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
		trayAsking: make(chan struct{}, maxTrayQuestions)}
}

// addHooks tells a about each session that initializes and ends.
func (a *Asker) addHooks(h *server.Hooks) {
	h.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
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
// for a person's yes, and never an error: every other outcome is Deny.
func (a *Asker) Ask(ctx context.Context, req AskRequest) (netproxy.Decision, error) {
	entry := net.JoinHostPort(req.Host, strconv.Itoa(req.Port))
	msg := fmt.Sprintf("Sandbox %s (%s, %s) wants to reach %s.", shortID(req.SandboxID),
		printable.Clean(req.Language, printable.NameMax), printable.Clean(req.Client, printable.NameMax),
		printable.Clean(entry, 300))
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
		if err := a.addAlways(entry); err != nil {
			a.o.Log.Warn("could not add the entry a person always allowed to the config; allowed for this sandbox only", "entry", entry, "err", err)
		}
		return netproxy.Allow, nil
	}
	return netproxy.Deny, nil
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
// cover (through the tray when the client cannot elicit). Allow means
// for that sandbox only, unless the person chose "Always", which also
// adds them to the config file. With neither an elicitation capability
// nor a listening tray it is Deny: the caller keeps its refusal.
func (a *Asker) AskEntries(ctx context.Context, language string, entries []string) (netproxy.Decision, error) {
	clean := make([]string, len(entries))
	for i, e := range entries {
		clean[i] = printable.Clean(e, 300)
	}
	msg := fmt.Sprintf("%s asks for a new %s sandbox that may reach %s.",
		clientName(ctx), printable.Clean(language, printable.NameMax), strings.Join(clean, ", "))
	ans := answerNone
	if sess := canElicit(server.ClientSessionFromContext(ctx)); sess != nil {
		ans = a.elicit(ctx, sess, msg)
	} else {
		ans = a.askTray(state.Question{Client: clientName(ctx), Language: language, Entries: slices.Clone(entries)})
	}
	a.o.Log.Info("asked a person about a new sandbox's hosts", "entries", clean, "answer", ans)
	switch ans {
	case answerAllow:
		return netproxy.Allow, nil
	case answerAlways:
		if err := a.addAlways(entries...); err != nil {
			a.o.Log.Warn("could not add the entries a person always allowed to the config; allowed for this sandbox only", "entries", clean, "err", err)
		}
		return netproxy.Allow, nil
	}
	return netproxy.Deny, nil
}
