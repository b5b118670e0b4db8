//go:build !windows

package cli

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestRunIntoClosedPipeLeavesNothing: `mcp-sandbox run prog.py | head -1`
// dies of SIGPIPE once head has its line, as any command does, and its
// watchdog removes the sandbox it ran in.
func TestRunIntoClosedPipeLeavesNothing(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	bin := clitest.Binary(t, "mcp-sandbox")
	home, env := e2eHome(t)
	f := filepath.Join(home, "flood.py")
	os.WriteFile(f, []byte("for i in range(10**7):\n    print(i)\n"), 0o600)
	cmd := exec.Command(bin, "run", f)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	out.Close() // head has its line
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if !strings.Contains(err.Error(), "broken pipe") {
			t.Fatalf("run ended with %v, want SIGPIPE", err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("run did not end after its output was closed")
	}
	logFile := filepath.Join(home, ".local", "state", "mcp-sandbox", "logs", "server.log")
	report := regexp.MustCompile(`removed what a server that is gone left".*by=watchdog.*sandboxes=\[(\w+)\]`)
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, _ := os.ReadFile(logFile)
		if m := report.FindSubmatch(b); m != nil {
			if _, err := cli.ContainerInspect(context.Background(), backend.ContainerName(string(m[1]))); err == nil {
				t.Errorf("sandbox %s is still there", m[1])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no watchdog removed run's sandbox:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
