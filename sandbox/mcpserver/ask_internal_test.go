package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// askSession is a client session whose person gives one answer.
type askSession struct {
	session
	action mcp.ElicitationResponseAction
	choice string
	asked  chan string
}

func newAskSession(id string, action mcp.ElicitationResponseAction, choice string, canAsk bool) *askSession {
	s := &askSession{session: *newSession(id), action: action, choice: choice, asked: make(chan string, 4)}
	caps := mcp.ClientCapabilities{}
	if canAsk {
		caps.Elicitation = &mcp.ElicitationCapability{}
	}
	s.SetClientCapabilities(caps)
	s.SetClientInfo(mcp.Implementation{Name: "Claude Desktop"})
	return s
}

func (s *askSession) RequestElicitation(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	s.asked <- req.Params.Message
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: s.action, Content: map[string]any{"answer": s.choice}}}, nil
}

// TestAskEntries: sandbox_create's entries beyond the config are asked of
// the calling session's person once, as one list; only a yes allows.
func TestAskEntries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		action mcp.ElicitationResponseAction
		choice string
		canAsk bool
		want   netproxy.Decision
		saved  bool
	}{
		{"allow", mcp.ElicitationResponseActionAccept, "allow", true, netproxy.Allow, false},
		{"always", mcp.ElicitationResponseActionAccept, "always", true, netproxy.Allow, true},
		{"decline", mcp.ElicitationResponseActionDecline, "", true, netproxy.Declined, false},
		{"cancel", mcp.ElicitationResponseActionCancel, "", true, netproxy.Deny, false},
		{"no elicitation capability", mcp.ElicitationResponseActionAccept, "allow", false, netproxy.Deny, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfgPath := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(cfgPath, []byte("# mine\n[network]\nallow_domains = []\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			a := NewAsker(AskerOptions{ConfigPath: cfgPath, Timeout: time.Second})
			sess := newAskSession("s1", tt.action, tt.choice, tt.canAsk)
			ctx := server.NewMCPServer("t", "1").WithContext(context.Background(), sess)
			got, err := a.AskEntries(ctx, "python", []string{"pypi.org", "files.pythonhosted.org"})
			if err != nil || got != tt.want {
				t.Fatalf("AskEntries = %v, %v; want %v", got, err, tt.want)
			}
			if tt.canAsk {
				if msg := <-sess.asked; msg != "Claude Desktop asks for a new python sandbox that may reach pypi.org, files.pythonhosted.org." {
					t.Errorf("asked %q", msg)
				}
			}
			if len(sess.asked) != 0 {
				t.Errorf("asked more than once")
			}
			cfg, err := config.Load(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			if saved := slices.Equal(cfg.Network.AllowDomains, []string{"pypi.org", "files.pythonhosted.org"}); saved != tt.saved {
				t.Errorf("allow_domains = %q (want saved: %v)", cfg.Network.AllowDomains, tt.saved)
			}
		})
	}
}

// TestAskWhom: the session that created a sandbox is asked about it, not
// a later one of the same client; without it, the most recent session of
// that client that can be asked; never another client's.
func TestAskWhom(t *testing.T) {
	t.Parallel()
	a := NewAsker(AskerOptions{Timeout: time.Second})
	creator := newAskSession("creator", mcp.ElicitationResponseActionAccept, "allow", true)
	later := newAskSession("later", mcp.ElicitationResponseActionAccept, "allow", true)
	mute := newAskSession("mute", mcp.ElicitationResponseActionAccept, "allow", false)
	other := newAskSession("other", mcp.ElicitationResponseActionAccept, "allow", true)
	a.remember("Claude Desktop", creator)
	a.remember("Claude Desktop", later)
	a.remember("Claude Desktop", mute)
	a.remember("Other", other)
	a.created("sb1", creator)

	tests := []struct {
		id, client string
		want       server.ClientSession
	}{
		{"sb1", "Claude Desktop", creator},
		{"sb2", "Claude Desktop", later},
		{"sb2", "Nobody", nil},
	}
	for _, tt := range tests {
		got := a.session(tt.id, tt.client)
		if (got == nil) != (tt.want == nil) || (got != nil && got.SessionID() != tt.want.SessionID()) {
			t.Errorf("session(%s, %s) = %v, want %v", tt.id, tt.client, got, tt.want)
		}
	}
	a.forget(creator)
	if got := a.session("sb1", "Claude Desktop"); got == nil || got.SessionID() != "later" {
		t.Errorf("after the creator left: %v, want later", got)
	}
}

// TestAskEntriesRisky: entries that reach the person's own machine or
// network, and wildcards, are listed apart with a warning each, and the
// most permissive answer ("Always") saves only the others.
func TestAskEntriesRisky(t *testing.T) {
	t.Parallel()
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfgPath, []byte("[network]\nallow_domains = []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := NewAsker(AskerOptions{ConfigPath: cfgPath, Timeout: time.Second})
	sess := newAskSession("s1", mcp.ElicitationResponseActionAccept, "always", true)
	ctx := server.NewMCPServer("t", "1").WithContext(context.Background(), sess)
	entries := []string{"pypi.org", "127.0.0.1:18099", "169.254.169.254:80", "172.17.0.1:2375", "*.evil.test"}
	if got, err := a.AskEntries(ctx, "python", entries); err != nil || got != netproxy.Allow {
		t.Fatalf("AskEntries = %v, %v", got, err)
	}
	msg := <-sess.asked
	for _, want := range []string{"may reach pypi.org,", "never saves them", "⚠ 127.0.0.1:18099: a loopback address", "⚠ 169.254.169.254:80: a cloud metadata address",
		"⚠ 172.17.0.1:2375: a private address", "⚠ *.evil.test: a wildcard"} {
		if !strings.Contains(msg, want) {
			t.Errorf("question %q lacks %q", msg, want)
		}
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Network.AllowDomains, []string{"pypi.org"}) {
		t.Errorf("Always saved %q, want pypi.org alone", cfg.Network.AllowDomains)
	}
}

// blockingSession answers nothing until release closes.
type blockingSession struct {
	*askSession
	release chan struct{}
}

func (s *blockingSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	s.asked <- req.Params.Message
	<-s.release
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
}

// TestAskOnePerSandbox: while a question about a sandbox waits, another
// about it is refused at once (an error, so it is asked later), one
// about another sandbox is asked; a host the person declined is not asked
// about again for that sandbox, on any port.
func TestAskOnePerSandbox(t *testing.T) {
	t.Parallel()
	a := NewAsker(AskerOptions{Timeout: 30 * time.Second})
	sess := &blockingSession{askSession: newAskSession("s1", "", "", true), release: make(chan struct{})}
	a.remember("c", sess)
	first := make(chan netproxy.Decision, 1)
	go func() {
		d, _ := a.Ask(context.Background(), AskRequest{SandboxID: "sb1", Client: "c", Host: "a.example", Port: 443})
		first <- d
	}()
	<-sess.asked
	if d, err := a.Ask(context.Background(), AskRequest{SandboxID: "sb1", Client: "c", Host: "b.example", Port: 443}); err == nil || d == netproxy.Allow {
		t.Errorf("second question about sb1 while one waits: %v, %v; want refused with an error", d, err)
	}
	go a.Ask(context.Background(), AskRequest{SandboxID: "sb2", Client: "c", Host: "b.example", Port: 443})
	select {
	case <-sess.asked:
	case <-time.After(10 * time.Second):
		t.Fatal("a question about another sandbox was not asked")
	}
	close(sess.release)
	if d := <-first; d != netproxy.Declined {
		t.Fatalf("declined: %v", d)
	}
	if d, err := a.Ask(context.Background(), AskRequest{SandboxID: "sb1", Client: "c", Host: "a.example", Port: 8443}); err != nil || d != netproxy.Declined {
		t.Errorf("a declined host again: %v, %v; want Declined", d, err)
	}
	if len(sess.asked) != 0 {
		t.Errorf("the declined host was asked about again")
	}
}

// TestAskOverHTTP: an HTTP session lasts one request, so no question is
// sent through it (it would wait for nobody): without a tray the answer
// is a refusal at once.
func TestAskOverHTTP(t *testing.T) {
	t.Parallel()
	a := NewAsker(AskerOptions{Timeout: time.Hour})
	sess := newAskSession("h1", mcp.ElicitationResponseActionAccept, "allow", true)
	ctx := context.WithValue(server.NewMCPServer("t", "1").WithContext(context.Background(), sess), httpTransportKey{}, true)
	h := &server.Hooks{}
	a.addHooks(h)
	for _, f := range h.OnAfterInitialize {
		f(ctx, nil, &mcp.InitializeRequest{}, &mcp.InitializeResult{})
	}
	if d, err := a.Ask(context.Background(), AskRequest{SandboxID: "sb1", Client: "Claude Desktop", Host: "a.example", Port: 443}); err != nil || d != netproxy.Deny {
		t.Errorf("Ask after an HTTP session: %v, %v", d, err)
	}
	if d, err := a.AskEntries(ctx, "python", []string{"a.example"}); err != nil || d != netproxy.Deny {
		t.Errorf("AskEntries over HTTP: %v, %v", d, err)
	}
	if len(sess.asked) != 0 {
		t.Errorf("asked through an HTTP session")
	}
}

// TestAskRateLimit: a client's sandboxes ask at most a burst of
// questions, then one per askEvery; beyond, a question is refused at once
// with an error (asked again on a later try), and other clients still ask.
func TestAskRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := NewAsker(AskerOptions{Timeout: time.Minute})
		sess := newAskSession("s1", mcp.ElicitationResponseActionAccept, "allow", true)
		other := newAskSession("s2", mcp.ElicitationResponseActionAccept, "allow", true)
		sess.asked, other.asked = make(chan string, 2*askBurst), make(chan string, 2)
		a.remember("c", sess)
		a.remember("o", other)
		ask := func(client string, i int) (netproxy.Decision, error) {
			return a.Ask(context.Background(), AskRequest{SandboxID: "sb" + strconv.Itoa(i), Client: client, Host: "h.example", Port: 443})
		}
		for i := range askBurst {
			if d, err := ask("c", i); err != nil || d != netproxy.Allow {
				t.Fatalf("question %d: %v, %v", i, d, err)
			}
		}
		if d, err := ask("c", askBurst); err == nil || d == netproxy.Allow {
			t.Errorf("beyond the burst: %v, %v; want refused with an error", d, err)
		}
		if d, err := ask("o", 0); err != nil || d != netproxy.Allow {
			t.Errorf("another client: %v, %v", d, err)
		}
		time.Sleep(askEvery)
		if d, err := ask("c", askBurst+1); err != nil || d != netproxy.Allow {
			t.Errorf("after %s: %v, %v", askEvery, d, err)
		}
	})
}
