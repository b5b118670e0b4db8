package update

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNothingOnStdout runs a check and downloads, good and bad, with
// stdout replaced by a pipe, and fails if anything arrives: stdout is the
// MCP channel wherever this code might one day run next to a server.
func TestNothingOnStdout(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	func() {
		defer func() { os.Stdout = old }()
		rs := newReleaseServer(t)
		rs.standard("1.1.0")
		o := rs.options("1.0.0")
		rel, err := Check(context.Background(), o)
		if err != nil {
			t.Error(err)
			return
		}
		Download(context.Background(), o, rel, t.TempDir())
		rs.mu.Lock()
		rs.body[rel.Artifact.Name] = []byte("tampered")
		rs.mu.Unlock()
		Download(context.Background(), o, rel, t.TempDir())
		rs.relabel("x")
		Check(context.Background(), o)
		rs.srv.Close()
		Check(context.Background(), o)
	}()
	w.Close()
	if s := <-got; s != "" {
		t.Errorf("wrote to stdout: %q", s)
	}
}

// TestNotInServer proves the update check cannot run on the server's path:
// the mcp-sandbox binary that AI clients start does not link this package,
// on any of the systems it is built for.
func TestNotInServer(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("go tool not found")
		}
		t.Skip("go tool not found")
	}
	const self = "github.com/mcp-sandbox/mcp-sandbox/app/update"
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(goTool, "list", "-deps", "github.com/mcp-sandbox/mcp-sandbox/cmd/mcp-sandbox")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v", goos, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 50 {
			t.Fatalf("go list (%s) listed only %d packages", goos, len(deps))
		}
		for _, d := range deps {
			if d == self {
				t.Errorf("cmd/mcp-sandbox links %s on %s", self, goos)
			}
		}
	}
}
