//go:build linux

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
)

// TestWatchdogEndsWithCleanServer: a server that ends cleanly releases its
// watchdog, which then ends at once, even when no engine answers (it
// would otherwise retry for minutes after every server that never had
// one).
func TestWatchdogEndsWithCleanServer(t *testing.T) {
	bin := clitest.Binary(t, "mcp-sandbox")
	home, env := e2eHome(t)
	env = append(env, "DOCKER_HOST=unix://"+filepath.Join(home, "no-docker.sock"))
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &clitest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := regexp.MustCompile(`watchdog_pid=(\d+)`)
	t.Cleanup(func() { cmd.Process.Kill() }) // a no-op once it exited
	var m []string
	clitest.WaitFor(t, "the watchdog to start", 15*time.Second, func() bool {
		m = started.FindStringSubmatch(stderr.String())
		return m != nil
	}, stderr.String)
	pid, _ := strconv.Atoi(m[1])
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	// The server waited for its watchdog's last look: nothing of it
	// outlives its exit (a test's temporary state directory is removed
	// right after, and must not get another log line).
	if running(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the watchdog of a server that ended cleanly outlived the server")
	}
}

// running reports whether pid is a process that is neither gone nor a
// zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !bytes.Contains(b, []byte(") Z "))
}
