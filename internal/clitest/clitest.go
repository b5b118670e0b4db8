package clitest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

var (
	buildMu  sync.Mutex
	built    = map[string]string{}
	buildDir string
)

// Binary builds ./cmd/NAME of this module once per test process (as
// testenv.Build builds it) and returns its path. A build that fails fails
// the test; the fast layer skips it (testenv.NeedBinaries).
func Binary(t testing.TB, name string) string {
	t.Helper()
	testenv.NeedBinaries(t)
	p, err := BuildBinary(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// BuildBinary is Binary for TestMain, which has no testing.TB.
func BuildBinary(name string) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[name]; ok {
		return p, nil
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "mcp-sandbox-bin-")
		if err != nil {
			return "", err
		}
		buildDir = d
	}
	bin, err := testenv.Build(buildDir, name)
	if err != nil {
		return "", err
	}
	built[name] = bin
	return bin, nil
}

// Cleanup removes the binaries Binary built; call it from TestMain after
// the tests ran.
func Cleanup() {
	buildMu.Lock()
	defer buildMu.Unlock()
	if buildDir != "" {
		os.RemoveAll(buildDir)
		buildDir = ""
		clear(built)
	}
}

// Run runs bin with args in env (exactly env: nothing of the test's own
// environment is added), waits for it to exit, and returns its exit code,
// stdout and stderr. A program that cannot be started fails the test.
func Run(t testing.TB, bin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", bin, err)
	}
	return code, out.String(), errb.String()
}

// Buffer collects what a running process writes (give it as cmd.Stderr)
// while the test reads it: Write and String may be called at once.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// WaitLine waits until a line written so far contains s, and returns that
// line. It fails the test, quoting all that was written, when timeout
// passes first.
func (b *Buffer) WaitLine(t testing.TB, s string, timeout time.Duration) string {
	t.Helper()
	var line string
	WaitFor(t, "a line with "+s, timeout, func() bool {
		line = lineWith(b.String(), s)
		return line != ""
	}, b.String)
	return line
}

// lineWith is the first whole line of text that contains s, or "".
func lineWith(text, s string) string {
	for l := range strings.Lines(text) {
		if strings.HasSuffix(l, "\n") && strings.Contains(l, s) {
			return strings.TrimSuffix(l, "\n")
		}
	}
	return ""
}

// WaitFor polls cond every 50 ms until it holds. When timeout passes
// first it fails the test, naming what it waited for and, for each of
// show, what it returns then (a process's output, say).
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() bool, show ...func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, f := range show {
				b.WriteString("\n")
				b.WriteString(f())
			}
			t.Fatalf("timed out after %v waiting for %s%s", timeout, what, b.String())
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
