//go:build linux

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestWatchdogEndsWithCleanServer: a server that ends cleanly releases its
// watchdog, which then ends at once, even when no engine answers (it
// would otherwise retry for minutes after every server that never had
// one).
func TestWatchdogEndsWithCleanServer(t *testing.T) {
	bin := buildServer(t)
	home, env := e2eHome(t)
	env = append(env, "DOCKER_HOST=unix://"+filepath.Join(home, "no-docker.sock"))
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := regexp.MustCompile(`watchdog_pid=(\d+)`)
	deadline := time.Now().Add(15 * time.Second)
	var m []string
	for m == nil {
		if m = started.FindStringSubmatch(stderr.String()); m == nil && time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no watchdog started:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
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

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
