package bundled

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/childproc"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpclient"
)

// Session is the server spawned over stdio, as an AI client spawns it.
type Session struct {
	cs      *mcpclient.Session
	Startup time.Duration
	// ServerVersion is what the server said of itself.
	ServerVersion string
}

// ConnectOptions says how to start the server.
type ConnectOptions struct {
	// Path is the server binary; it is run as `Path serve`.
	Path string
	// Env holds the entry's variables (DOCKER_HOST), set on top of what a
	// client passes on anyway (see ClientEnv).
	Env map[string]string
	// Getenv reads the tray's environment; nil means os.Getenv.
	Getenv func(string) string
	// ClientName is how the session introduces itself.
	ClientName string
}

// Connect starts the server and completes the MCP handshake.
func Connect(ctx context.Context, o ConnectOptions) (*Session, error) {
	if o.ClientName == "" {
		o.ClientName = "mcp-sandbox-tray"
	}
	cmd := exec.Command(o.Path, "serve")
	childproc.NoWindow(cmd)
	cmd.Env = ClientEnv(o.Getenv, o.Env)
	start := time.Now()
	cs, err := mcpclient.Start(ctx, cmd, mcpclient.Options{Name: o.ClientName, TerminateAfter: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("start %s serve: %w", o.Path, err)
	}
	s := &Session{cs: cs, Startup: time.Since(start)}
	if ir := cs.InitializeResult(); ir != nil {
		s.ServerVersion = ir.ServerInfo.Version
	}
	return s, nil
}

// Call calls a tool and returns its structured result decoded into out (if
// non-nil) and its text. A result with isError is an error whose message is
// the result's text.
func (s *Session) Call(ctx context.Context, tool string, args map[string]any, out any) (string, error) {
	res, err := s.cs.CallTool(ctx, tool, args)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return res.Text, &ToolError{Tool: tool, Message: res.Text}
	}
	if out != nil && res.Structured != nil {
		if err := res.Decode(out); err != nil {
			return res.Text, fmt.Errorf("%s: decode result: %w", tool, err)
		}
	}
	return res.Text, nil
}

// Close ends the session; the server sees stdin close and removes its
// sandboxes.
func (s *Session) Close() error { return s.cs.Close() }

// ToolError is a tool result with isError set: the server could not do
// what was asked and says why.
type ToolError struct {
	Tool    string
	Message string
}

func (e *ToolError) Error() string { return e.Tool + ": " + e.Message }

// trayVars point the server at the tray's own config and state when the
// tray was started with them, so the Test runs against the settings the
// tray shows.
var trayVars = []string{"MCP_SANDBOX_CONFIG", "MCP_SANDBOX_STATE_DIR"}

// ClientEnv is the environment a client gives the server (see
// clientconfig.ChildEnv), plus the tray's own config and state variables,
// with extra over them.
func ClientEnv(getenv func(string) string, extra map[string]string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	vars := map[string]string{}
	for _, k := range trayVars {
		if v := getenv(k); v != "" {
			vars[k] = v
		}
	}
	for k, v := range extra {
		vars[k] = v
	}
	return clientconfig.ChildEnv(clientconfig.Env{Getenv: getenv}, vars)
}
