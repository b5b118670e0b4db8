package bundled

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
)

// TestRoundTrip spawns the real server binary over stdio against the real
// engine, as the Status tab's Test button does.
func TestRoundTrip(t *testing.T) {
	apptest.Docker(t, apptest.PythonImage)
	apptest.Home(t)
	bin := apptest.Binary(t, "mcp-sandbox")

	info, err := Version(context.Background(), bin)
	if err != nil || info.Version == "" {
		t.Fatalf("Version = %+v, %v", info, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Test(ctx, TestOptions{Path: bin})
	if err != nil {
		t.Fatalf("Test: %v", err)
	}
	if strings.TrimSpace(res.Output) != "hello" || res.RoundTrip <= 0 || res.Startup <= 0 {
		t.Errorf("Test = %+v; want hello and positive times", res)
	}
	if res.ServerVersion != info.Version {
		t.Errorf("server reported %q over MCP, %q on the command line", res.ServerVersion, info.Version)
	}
	t.Logf("round trip %v, startup %v", res.RoundTrip, res.Startup)
}

// TestRoundTripReportsToolErrors checks that a refusal from the server
// comes back as a *ToolError with the server's words.
func TestRoundTripReportsToolErrors(t *testing.T) {
	apptest.Docker(t)
	apptest.Home(t)
	bin := apptest.Binary(t, "mcp-sandbox")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Connect(ctx, ConnectOptions{Path: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Call(ctx, "sandbox_stop", map[string]any{"sandbox_id": "nosuchsandbox"}, nil)
	var te *ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "nosuchsandbox") {
		t.Fatalf("err = %v; want a ToolError naming the sandbox", err)
	}
}

func TestClientEnv(t *testing.T) {
	env := map[string]string{"HOME": "/h", "PATH": "/bin", "SECRET": "x", "MCP_SANDBOX_CONFIG": "/c.toml", "BASH_FUNC_x%%": "() { :; }", "SHELL": "() { bad"}
	got := ClientEnv(func(k string) string { return env[k] }, map[string]string{"DOCKER_HOST": "unix:///d.sock"})
	want := "DOCKER_HOST=unix:///d.sock HOME=/h MCP_SANDBOX_CONFIG=/c.toml PATH=/bin"
	if strings.Join(got, " ") != want {
		t.Errorf("ClientEnv = %q, want %q", got, want)
	}
}
