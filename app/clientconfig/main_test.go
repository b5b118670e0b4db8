package clientconfig

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fakeServerMode is the entry env variable that picks how the test binary
// behaves when it runs as a server.
const fakeServerMode = "CLIENTCONFIG_FAKE_SERVER"

// TestMain lets the test binary stand in for `mcp-sandbox serve`: run with
// the single argument "serve" it is a tiny stdio MCP server (or, as the
// entry's env asks, a broken one), which is what Verify is tested against.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "serve" {
		os.Exit(fakeServer(os.Getenv(fakeServerMode)))
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
	case "hang":
		time.Sleep(time.Minute)
		return 0
	}
	// The version reports what the server saw of its environment, so tests
	// can check what Verify passed on.
	version := fmt.Sprintf("docker=%s secret=%s path=%t", os.Getenv("DOCKER_HOST"), os.Getenv("SECRET_TOKEN"), os.Getenv("PATH") != "")
	s := server.NewMCPServer("fake-sandbox", version)
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithDescription("Echoes its input.")),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("echo"), nil
		})
	if err := server.ServeStdio(s); err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// mapEnv is an environment for tests.
type mapEnv map[string]string

func (m mapEnv) get(k string) string { return m[k] }

// testEnv is a Linux environment whose home is a fresh temporary directory.
func testEnv(t *testing.T) (Env, string) {
	t.Helper()
	home := t.TempDir()
	return Env{GOOS: "linux", Getenv: mapEnv{"HOME": home}.get}, home
}
