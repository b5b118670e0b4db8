package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// askConfig is a config file a person wrote, with comments to keep.
const askConfig = `# my own comment, to keep
[network]
# hosts any sandbox may reach
allow_domains = ["example.org"] # trailing comment
`

// askServer serves a stdio session to the official Go SDK client, whose
// elicitation handler (nil: no elicitation capability) plays the person.
func askServer(t *testing.T, handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), timeout time.Duration) (*mcpserver.Asker, string) {
	t.Helper()
	// A session of the 2025-11-25 protocol: the one where a server may
	// ask its client outside a call. (2026-07-28 has no session to ask
	// in: see Asker.)
	return askServerAt(t, handler, timeout, "2025-11-25")
}

// askServerAt is askServer with a client of protocol revision version.
func askServerAt(t *testing.T, handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), timeout time.Duration, version string) (*mcpserver.Asker, string) {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfgPath, []byte(askConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	asker := mcpserver.NewAsker(mcpserver.AskerOptions{ConfigPath: cfgPath, Timeout: timeout})
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng := sandbox.NewEngine(sandbox.Options{Backend: fake.New(), Config: config.Static(config.Default()), State: st, OwnerID: "ask-owner"})
	srv := mcpserver.New(mcpserver.Options{Engine: eng, Asker: asker})
	ctx, cancel := context.WithCancel(context.Background())
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.ServeStdio(ctx, toServer, fromServer)
		fromServer.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "Claude Desktop", Version: "1.0"}, &mcp.ClientOptions{ElicitationHandler: handler})
	sess, err := c.Connect(testContext(t, 30*time.Second), &mcp.IOTransport{Reader: toClient, Writer: fromClient},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		sess.Close()
		cancel()
		fromClient.Close()
		<-served
	})
	return asker, cfgPath
}

func reply(action string, content map[string]any) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: action, Content: content}, nil
	}
}

// TestAskElicitation: only a person's accept with allow or always opens
// the host; always adds it to the config file, keeping its comments and
// a backup; decline, cancel, an error, a client without elicitation and
// no answer in time all deny.
func TestAskElicitation(t *testing.T) {
	t.Parallel()
	never := func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	tests := []struct {
		name    string
		handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
		want    netproxy.Decision
		saved   bool
	}{
		{"accept allow", reply("accept", map[string]any{"answer": "allow"}), netproxy.Allow, false},
		{"accept always", reply("accept", map[string]any{"answer": "always"}), netproxy.Allow, true},
		{"accept deny", reply("accept", map[string]any{"answer": "deny"}), netproxy.Declined, false},
		{"accept without a choice", reply("accept", map[string]any{}), netproxy.Deny, false},
		{"decline", reply("decline", nil), netproxy.Declined, false},
		{"cancel", reply("cancel", nil), netproxy.Deny, false},
		{"client error", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("no")
		}, netproxy.Deny, false},
		{"no elicitation capability", nil, netproxy.Deny, false},
		{"no answer in time", never, netproxy.Deny, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var asked atomic.Value // string
			handler := tt.handler
			if handler != nil {
				handler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Store(req.Params.Message)
					return tt.handler(ctx, req)
				}
			}
			asker, cfgPath := askServer(t, handler, 2*time.Second)
			got, err := asker.Ask(testContext(t, 30*time.Second), mcpserver.AskRequest{
				SandboxID: "3f2a1b9c7d6e", Language: "python", Client: "Claude Desktop", Host: "pypi.org", Port: 443,
			})
			if err != nil || got != tt.want {
				t.Fatalf("Ask = %v, %v; want %v", got, err, tt.want)
			}
			if handler != nil && asked.Load() != "Sandbox 3f2a1b9c… (python, Claude Desktop) wants to reach pypi.org:443." {
				t.Errorf("asked %q", asked)
			}
			checkSaved(t, cfgPath, tt.saved)
		})
	}
}

func checkSaved(t *testing.T, cfgPath string, saved bool) {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"example.org"}
	if saved {
		want = append(want, "pypi.org:443")
	}
	if strings.Join(cfg.Network.AllowDomains, ",") != strings.Join(want, ",") {
		t.Errorf("allow_domains = %q, want %q", cfg.Network.AllowDomains, want)
	}
	data, _ := os.ReadFile(cfgPath)
	for _, c := range []string{"# my own comment, to keep", "# hosts any sandbox may reach", "# trailing comment"} {
		if !strings.Contains(string(data), c) {
			t.Errorf("the config lost %q:\n%s", c, data)
		}
	}
	backups, _ := filepath.Glob(cfgPath + ".*.bak")
	if saved != (len(backups) == 1) {
		t.Errorf("backups %q (saved: %v)", backups, saved)
	}
}

// TestAskOutlivesConnection: the connection that raised the question may
// end (a client's own timeout) before the person answers; the answer still
// counts, for the proxy to remember for the retry.
func TestAskOutlivesConnection(t *testing.T) {
	t.Parallel()
	answered := make(chan struct{})
	asker, _ := askServer(t, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		<-answered
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "allow"}}, nil
	}, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		cancel() // the connection gave up
		close(answered)
	}()
	got, err := asker.Ask(ctx, mcpserver.AskRequest{SandboxID: "sb", Language: "python", Client: "Claude Desktop", Host: "pypi.org", Port: 443})
	if err != nil || got != netproxy.Allow {
		t.Fatalf("Ask = %v, %v; want Allow", got, err)
	}
}

// TestAskElicitationForm: the question's choices carry titles in the form
// of the client's revision: oneOf [{const, title}] from 2025-11-25 on,
// the legacy enumNames beside enum before it. Either way "always" is
// understood.
func TestAskElicitationForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ version, want, not string }{
		{"2025-11-25", `"oneOf":[{"const":"allow","title":"Allow for this sandbox"},{"const":"always","title":"Always allow"},{"const":"deny","title":"Deny"}]`, "enumNames"},
		{"2025-06-18", `"enumNames":["Allow for this sandbox","Always allow","Deny"]`, "oneOf"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			var schema atomic.Value // string
			asker, cfgPath := askServerAt(t, func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				b, _ := json.Marshal(req.Params.RequestedSchema)
				schema.Store(string(b))
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "always"}}, nil
			}, 2*time.Second, tc.version)
			got, err := asker.Ask(testContext(t, 30*time.Second), mcpserver.AskRequest{
				SandboxID: "3f2a1b9c7d6e", Language: "python", Client: "Claude Desktop", Host: "pypi.org", Port: 443,
			})
			if err != nil || got != netproxy.Allow {
				t.Fatalf("Ask = %v, %v; want allow", got, err)
			}
			s, _ := schema.Load().(string)
			if !strings.Contains(s, tc.want) || strings.Contains(s, tc.not) {
				t.Errorf("form at %s: %s\nwant %s, without %s", tc.version, s, tc.want, tc.not)
			}
			checkSaved(t, cfgPath, true)
		})
	}
}
