package bundled

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// TestCode is what the Test button runs.
const TestCode = `print("hello")`

// TestClientName is how the Test button's session introduces itself:
// the audit log and Activity show it apart from the AI clients, and the
// tray does not count its failures as a client's.
const TestClientName = "MCP Sandbox (Test)"

// TestOptions is ConnectOptions under another name, for the Test button.
type TestOptions = ConnectOptions

// TestResult is what the round trip showed.
type TestResult struct {
	// Output is the program's standard output.
	Output string
	// ExitCode is the program's exit code.
	ExitCode int
	// Startup is the time from spawning the server to a completed
	// handshake; RoundTrip the time run_code took, sandbox included.
	Startup, RoundTrip time.Duration
	// ServerVersion is the version the server reported.
	ServerVersion string
}

// Test spawns the server over stdio exactly as a client would, runs
// print("hello") with run_code (a fresh sandbox, removed afterwards), and
// times the round trip. The error says what failed: the spawn, the
// handshake, or the tool call (a *ToolError carries the server's advice).
func Test(ctx context.Context, o TestOptions) (TestResult, error) {
	var r TestResult
	if o.ClientName == "" {
		o.ClientName = TestClientName
	}
	s, err := Connect(ctx, o)
	if err != nil {
		return r, err
	}
	defer s.Close()
	r.Startup, r.ServerVersion = s.Startup, s.ServerVersion
	var out struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	}
	start := time.Now()
	if _, err := s.Call(ctx, "run_code", map[string]any{"code": TestCode, "language": "python"}, &out); err != nil {
		return r, err
	}
	r.RoundTrip = time.Since(start)
	r.Output, r.ExitCode = out.Stdout, out.ExitCode
	if out.ExitCode != 0 || strings.TrimSpace(out.Stdout) != "hello" {
		return r, fmt.Errorf("run_code printed %q with exit code %d (stderr %q), want \"hello\"", out.Stdout, out.ExitCode, out.Stderr)
	}
	return r, nil
}
