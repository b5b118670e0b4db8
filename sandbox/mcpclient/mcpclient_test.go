package mcpclient_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpclient"
)

// mode is the variable that makes the test binary a server of one kind.
const mode = "MCPCLIENT_TEST_SERVER"

// TestMain lets the test binary stand in for the server: a real mcp-go
// stdio server, or (as the variable asks) a broken one.
func TestMain(m *testing.M) {
	if v := os.Getenv(mode); v != "" {
		os.Exit(fakeServer(v))
	}
	os.Exit(m.Run())
}

func fakeServer(mode string) int {
	switch mode {
	case "garbage":
		fmt.Println("Welcome! This is not JSON-RPC.")
		time.Sleep(time.Minute)
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: cannot reach Docker")
		return 3
	case "deaf": // answers, but ignores the end of its stdin
		s := server.NewMCPServer("deaf", "1")
		// Listen, unlike ServeStdio, leaves SIGTERM to its default.
		go func() { _ = server.NewStdioServer(s).Listen(context.Background(), os.Stdin, os.Stdout) }()
		time.Sleep(time.Minute)
		return 0
	}
	s := server.NewMCPServer("fake-sandbox", "1.2.3")
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := req.GetString("text", "")
			if text == "fail" {
				return mcp.NewToolResultError("asked to fail"), nil
			}
			return mcp.NewToolResultStructured(map[string]any{"echo": text}, text), nil
		})
	if err := server.ServeStdio(s); err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func serverCmd(t *testing.T, m string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), mode+"="+m)
	return cmd
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestSession lists and calls tools at the newest revision and at the
// last one with the initialize handshake.
func TestSession(t *testing.T) {
	for _, tt := range []struct{ ask, want string }{
		{"", mcp.ProtocolVersion20260728},
		{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20251125},
	} {
		t.Run("protocol "+tt.want, func(t *testing.T) {
			cmd := serverCmd(t, "ok")
			s, err := mcpclient.Start(ctx(t), cmd, mcpclient.Options{Name: "test", ProtocolVersion: tt.ask})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.ProtocolVersion(); got != tt.want {
				t.Errorf("protocol %q, want %q", got, tt.want)
			}
			if ir := s.InitializeResult(); ir == nil || ir.ServerInfo.Name != "fake-sandbox" || ir.ServerInfo.Version != "1.2.3" {
				t.Errorf("initialize result %+v, want fake-sandbox 1.2.3", ir)
			}
			tools, err := s.ListTools(ctx(t), 10)
			if err != nil || len(tools) != 1 || tools[0].Name != "echo" {
				t.Fatalf("ListTools = %+v, %v; want echo", tools, err)
			}
			res, err := s.CallTool(ctx(t), "echo", map[string]any{"text": "hi"})
			if err != nil {
				t.Fatal(err)
			}
			var out struct{ Echo string }
			if err := res.Decode(&out); err != nil || res.IsError || res.Text != "hi" || out.Echo != "hi" {
				t.Errorf("echo = %+v (%+v, %v), want text and structured hi", res, out, err)
			}
			res, err = s.CallTool(ctx(t), "echo", map[string]any{"text": "fail"})
			if err != nil || !res.IsError || res.Text != "asked to fail" {
				t.Errorf("failing call = %+v, %v; want an error result", res, err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if !cmd.ProcessState.Success() {
				t.Errorf("server ended with %v", cmd.ProcessState)
			}
		})
	}
}

func TestNotJSON(t *testing.T) {
	cmd := serverCmd(t, "garbage")
	_, err := mcpclient.Start(ctx(t), cmd, mcpclient.Options{Name: "test", TerminateAfter: 100 * time.Millisecond})
	if !errors.Is(err, mcpclient.ErrNotJSONRPC) || !strings.Contains(err.Error(), "Welcome!") {
		t.Fatalf("Start = %v, want ErrNotJSONRPC quoting the line", err)
	}
	if cmd.ProcessState == nil {
		t.Error("the server was not waited for")
	}
}

func TestExited(t *testing.T) {
	cmd := serverCmd(t, "exit")
	_, err := mcpclient.Start(ctx(t), cmd, mcpclient.Options{Name: "test"})
	if !errors.Is(err, mcpclient.ErrExited) {
		t.Fatalf("Start = %v, want ErrExited", err)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("process state %v, want exit status 3", cmd.ProcessState)
	}
}

func TestNotStarted(t *testing.T) {
	cmd := exec.Command("/nonexistent/mcp-sandbox", "serve")
	if _, err := mcpclient.Start(ctx(t), cmd, mcpclient.Options{}); err == nil || cmd.Process != nil {
		t.Fatalf("Start = %v with process %v, want an error and no process", err, cmd.Process)
	}
}

// TestCloseTerminates: a server that does not exit when its stdin closes
// is terminated.
func TestCloseTerminates(t *testing.T) {
	cmd := serverCmd(t, "deaf")
	s, err := mcpclient.Start(ctx(t), cmd, mcpclient.Options{Name: "test", TerminateAfter: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Close()
	if err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Errorf("Close = %v, want it terminated", err)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.Exited() {
		t.Errorf("process state %v, want ended by a signal", cmd.ProcessState)
	}
}
