package clientconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/childproc"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpclient"
)

// DefaultVerifyTimeout bounds Verify when no timeout is given. A first
// start may pull an image or wait for Docker, so it is generous.
const DefaultVerifyTimeout = 30 * time.Second

// VerifyOptions says how Verify runs the server.
type VerifyOptions struct {
	// Env locates the config file and supplies the variables a client
	// passes on to the servers it starts.
	Env Env
	// Timeout bounds the whole check; zero means DefaultVerifyTimeout.
	Timeout time.Duration
}

// VerifyResult is what the server answered.
type VerifyResult struct {
	// Client is the client whose entry was run, if any.
	Client string `json:"client,omitempty"`
	// Command and Args are what was run.
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// ServerName and ServerVersion are the server's own account of itself.
	ServerName    string `json:"server_name"`
	ServerVersion string `json:"server_version"`
	// ProtocolVersion is the MCP version the two sides agreed on.
	ProtocolVersion string `json:"protocol_version"`
	// Tools is how many tools the server lists.
	Tools int `json:"tools"`
	// Startup is the time from starting the command to a completed
	// handshake.
	Startup time.Duration `json:"startup_ns"`
	// RoundTrip is the time tools/list took.
	RoundTrip time.Duration `json:"round_trip_ns"`
}

// Verify starts exactly the command the client's entry names, with its
// arguments and environment, completes an MCP handshake and lists the
// tools, the way the client itself would. The error wraps
// ErrNotConfigured, ErrCommandNotFound, ErrServerExited, ErrNotMCP or
// ErrTimeout, and quotes the end of the server's stderr when it wrote any.
func (c *Client) Verify(ctx context.Context, opts VerifyOptions) (*VerifyResult, error) {
	st, err := c.status(StatusOptions{Env: opts.Env})
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", c.name, err)
	}
	if !st.Configured {
		return nil, fmt.Errorf("verify %s: %w in %s", c.name, ErrNotConfigured, st.Path)
	}
	res, err := VerifyEntry(ctx, *st.Entry, opts)
	if res != nil {
		res.Client = c.name
	}
	if err != nil {
		return res, fmt.Errorf("verify %s: %w", c.name, err)
	}
	return res, nil
}

// VerifyEntry is Verify for an entry given directly rather than read from
// a client's config.
func VerifyEntry(ctx context.Context, e Entry, opts VerifyOptions) (*VerifyResult, error) {
	res := &VerifyResult{Command: e.Command, Args: argsOf(e)}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	env := ChildEnv(opts.Env, e.Env)
	path, err := resolveCommand(e.Command, env)
	if err != nil {
		return res, err
	}
	cmd := exec.Command(path, e.Args...)
	childproc.NoWindow(cmd)
	cmd.Env = env
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr

	start := time.Now()
	cs, err := mcpclient.Start(ctx, cmd, mcpclient.Options{Name: "mcp-sandbox-verify", TerminateAfter: 2 * time.Second})
	if err != nil {
		return res, explain(ctx, timeout, err, cmd, stderr)
	}
	res.Startup = time.Since(start)
	res.ProtocolVersion = cs.ProtocolVersion()
	if ir := cs.InitializeResult(); ir != nil {
		res.ServerName, res.ServerVersion = ir.ServerInfo.Name, ir.ServerInfo.Version
	}
	start = time.Now()
	tools, err := cs.ListTools(ctx, 100)
	if err != nil {
		_ = cs.Close()
		return res, explain(ctx, timeout, fmt.Errorf("tools/list: %w", err), cmd, stderr)
	}
	res.Tools = len(tools)
	res.RoundTrip = time.Since(start)
	_ = cs.Close()
	return res, nil
}

// explain turns a failed session into an error a person can act on. The
// session has been closed by now, so the process has been waited for.
func explain(ctx context.Context, timeout time.Duration, err error, cmd *exec.Cmd, stderr *tailBuffer) error {
	tail := ""
	if s := stderr.lastLines(5); s != "" {
		tail = "; its stderr ends with:\n" + s
	}
	ps := cmd.ProcessState
	switch {
	case cmd.Process == nil:
		return fmt.Errorf("%w: cannot run %s: %v", ErrCommandNotFound, cmd.Path, err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: %s gave no MCP answer within %s%s", ErrTimeout, cmd.Path, timeout, tail)
	case ctx.Err() != nil:
		return fmt.Errorf("verify %s: %w", cmd.Path, ctx.Err())
	case errors.Is(err, mcpclient.ErrNotJSONRPC):
		return fmt.Errorf("%w: %s wrote something that is not MCP to stdout (%v)%s", ErrNotMCP, cmd.Path, err, tail)
	case ps != nil && ps.Exited():
		return fmt.Errorf("%w: %s exited with status %d before answering%s", ErrServerExited, cmd.Path, ps.ExitCode(), tail)
	default:
		return fmt.Errorf("%w: %s: %v%s", ErrNotMCP, cmd.Path, err, tail)
	}
}

// inherited are the variables a client passes to a stdio server on top of
// the entry's own env, as the reference MCP SDKs do: enough to find
// programs and the home directory, and nothing that leaks a session.
var inherited = map[string][]string{
	"windows": {"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
		"PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"},
	"other": {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"},
}

// ChildEnv is the environment a client gives the server: the inherited
// variables from env with the entry's env over them, as KEY=value lines.
func ChildEnv(env Env, extra map[string]string) []string {
	names := inherited["other"]
	if env.goos() == "windows" {
		names = inherited["windows"]
	}
	vars := map[string]string{}
	for _, k := range names {
		// Exported shell functions look like "() { …"; clients drop them.
		if v := env.getenv(k); v != "" && !strings.HasPrefix(v, "()") {
			vars[k] = v
		}
	}
	for k, v := range extra {
		vars[k] = v
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// resolveCommand finds the program the client would run: a path as given,
// or a bare name on the server's PATH.
func resolveCommand(command string, env []string) (string, error) {
	if command == "" {
		return "", fmt.Errorf("%w: the entry has no command", ErrCommandNotFound)
	}
	if strings.ContainsAny(command, `/\`) {
		fi, err := os.Stat(command)
		switch {
		case err != nil:
			return "", fmt.Errorf("%w: %s does not exist", ErrCommandNotFound, command)
		case !isExecutable(command):
			return "", fmt.Errorf("%w: %s is not an executable file (mode %v)", ErrCommandNotFound, command, fi.Mode())
		}
		return command, nil
	}
	lookup := Env{Getenv: func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}}
	if p := lookup.lookPath(command); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s is not on the server's PATH (%s)", ErrCommandNotFound, command, lookup.getenv("PATH"))
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// lastLines returns up to n last non-empty lines written.
func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
