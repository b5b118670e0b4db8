package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// playTray answers the first question that appears in st with answer
// (written raw into the answer's place when raw is set), and sends the
// question it saw; it closes seen when stop is closed before any.
func playTray(t *testing.T, st *state.Store, choice, raw string, stop <-chan struct{}) <-chan state.Question {
	t.Helper()
	seen := make(chan state.Question, 1)
	go func() {
		for {
			select {
			case <-stop:
				close(seen)
				return
			default:
			}
			qs := st.Questions(time.Now())
			if len(qs) == 0 {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			q := qs[0]
			seen <- q
			if raw != "" {
				os.WriteFile(filepath.Join(st.Dir(), state.AsksDir, q.ID+".answer.json"), []byte(strings.ReplaceAll(raw, "ID", q.ID)), 0o600)
				return
			}
			if choice != "" {
				if err := st.PutAnswer(state.Answer{ID: q.ID, Choice: choice, AnsweredAt: time.Now()}); err != nil {
					t.Error(err)
				}
			}
			return
		}
	}()
	return seen
}

// TestAskThroughTray: a client that cannot elicit has its person asked
// through the tray; only the tray's allow or always is a yes, always
// lands in the config; without a listening tray nothing is asked.
func TestAskThroughTray(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tray   bool
		choice string
		raw    string
		want   netproxy.Decision
		saved  bool
	}{
		{"allow", true, state.ChoiceAllow, "", netproxy.Allow, false},
		{"always", true, state.ChoiceAlways, "", netproxy.Allow, true},
		{"deny", true, state.ChoiceDeny, "", netproxy.Declined, false},
		{"no answer", true, "", "", netproxy.Deny, false},
		{"answer for another id", true, "", `{"id":"00000000000000000000000000000000","choice":"allow","answered_at":"2100-01-01T00:00:00Z"}`, netproxy.Deny, false},
		{"answer with trailing data", true, "", `{"id":"ID","choice":"always","answered_at":"2100-01-01T00:00:00Z"} x`, netproxy.Deny, false},
		{"no tray", false, state.ChoiceAllow, "", netproxy.Deny, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfgPath := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(cfgPath, []byte("# mine\n[network]\nallow_domains = []\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := state.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if tt.tray {
				l, err := st.ListenAsks()
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
			}
			// Without a tray too: a question put there anyway would be
			// answered, and show.
			stop := make(chan struct{})
			seen := playTray(t, st, tt.choice, tt.raw, stop)
			a := NewAsker(AskerOptions{ConfigPath: cfgPath, Timeout: 500 * time.Millisecond, State: st})
			got, err := a.Ask(context.Background(), AskRequest{SandboxID: "3f2a9c01", Client: "Claude Desktop", Language: "python", Host: "pypi.org", Port: 443})
			if err != nil || got != tt.want {
				t.Fatalf("Ask = %v, %v; want %v", got, err, tt.want)
			}
			close(stop)
			q, asked := <-seen
			if asked != tt.tray {
				t.Errorf("the tray was asked: %v, want %v", asked, tt.tray)
			}
			if asked {
				if q.SandboxID != "3f2a9c01" || q.Client != "Claude Desktop" || q.Language != "python" || !slices.Equal(q.Entries, []string{"pypi.org:443"}) {
					t.Errorf("the tray was asked %+v", q)
				}
			}
			if qs := st.Questions(time.Now()); len(qs) != 0 {
				t.Errorf("questions left after the answer: %+v", qs)
			}
			cfg, err := config.Load(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			if saved := slices.Equal(cfg.Network.AllowDomains, []string{"pypi.org:443"}); saved != tt.saved {
				t.Errorf("allow_domains = %q (want saved: %v)", cfg.Network.AllowDomains, tt.saved)
			}
		})
	}
}

// TestAskTrayBounded: a sandbox trying many hosts at once has at most
// maxTrayQuestions of them waiting in the tray; the rest are refused
// without asking, and the ones asked get the person's answer.
func TestAskTrayBounded(t *testing.T) {
	t.Parallel()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.ListenAsks()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a := NewAsker(AskerOptions{ConfigPath: filepath.Join(t.TempDir(), "config.toml"), Timeout: 30 * time.Second, State: st})
	const n = 3 * maxTrayQuestions
	done := make(chan netproxy.Decision, n)
	for i := range n {
		go func() {
			d, _ := a.Ask(context.Background(), AskRequest{SandboxID: "3f2a9c0" + strconv.Itoa(i), Client: "c" + strconv.Itoa(i), Language: "python", Host: "h" + strings.Repeat("x", i) + ".example", Port: 443})
			done <- d
		}()
	}
	// The ones beyond the bound are refused while the others wait.
	for range n - maxTrayQuestions {
		if d := <-done; d != netproxy.Deny {
			t.Fatalf("beyond the bound: %v, want Deny", d)
		}
	}
	// The others are written a moment after they took their place.
	var qs []state.Question
	for deadline := time.Now().Add(10 * time.Second); len(qs) < maxTrayQuestions && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		qs = st.Questions(time.Now())
	}
	if len(qs) != maxTrayQuestions {
		t.Fatalf("%d questions wait in the tray, want %d", len(qs), maxTrayQuestions)
	}
	for _, q := range qs {
		if err := st.PutAnswer(state.Answer{ID: q.ID, Choice: state.ChoiceAllow, AnsweredAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	for range maxTrayQuestions {
		if d := <-done; d != netproxy.Allow {
			t.Errorf("asked and allowed: %v", d)
		}
	}
}
