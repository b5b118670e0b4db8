package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
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
		{"decline", mcp.ElicitationResponseActionDecline, "", true, netproxy.Deny, false},
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
			got, err := a.AskEntries(ctx, "python", []string{"pypi.org", "*.pythonhosted.org"})
			if err != nil || got != tt.want {
				t.Fatalf("AskEntries = %v, %v; want %v", got, err, tt.want)
			}
			if tt.canAsk {
				if msg := <-sess.asked; msg != "Claude Desktop asks for a new python sandbox that may reach pypi.org, *.pythonhosted.org." {
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
			if saved := slices.Equal(cfg.Network.AllowDomains, []string{"pypi.org", "*.pythonhosted.org"}); saved != tt.saved {
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
