package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// serverBin is the real mcp-sandbox binary, built once for these tests
// (by the first test that runs it; the fast layer skips such tests).
func serverBin(t testing.TB) string {
	t.Helper()
	return clitest.Binary(t, "mcp-sandbox")
}

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	clitest.Cleanup()
	os.Exit(code)
}

// serverEnv writes a config that uses the test images (no registry is
// reachable) and the runtime MCP_SANDBOX_TEST_RUNTIME names, and returns
// the environment for a server process with its own state dir and home.
func serverEnv(t *testing.T, extraTOML string) []string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`[images]
python = %q
javascript = %q
bash = %q
pull = "never"

[pool]
size = 0
%s`, testenv.PythonImage, testenv.NodeImage, testenv.PythonImage, extraTOML)
	p := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(p, []byte(testenv.WithRuntime(cfg)), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	env := []string{
		"MCP_SANDBOX_CONFIG=" + p,
		"MCP_SANDBOX_STATE_DIR=" + filepath.Join(dir, "state"),
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
	}
	// The engine the tests run on (CI's Podman step names it), explicit
	// for the server too.
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		env = append(env, "DOCKER_HOST="+h)
	}
	return env
}

// proc is a running server with its stdio, whose stdout is recorded line
// by line (the wire, in order) while a client reads it.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser // what the client reads
	wire   *wire
	stderr *clitest.Buffer
}

func startServer(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startServerCmd(t, env, append([]string{serverBin(t), "serve"}, args...))
}

// startServerCmd is startServer for a server started by argv (through
// unshare, say).
func startServerCmd(t *testing.T, env []string, argv []string) *proc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: stdin, wire: &wire{}, stderr: &clitest.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	p.stdout = pr
	go func() {
		// Tee: record each line, pass it on to the client.
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				p.wire.add(line)
				if _, werr := pw.Write(line); werr != nil {
					io.Copy(io.Discard, r)
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// wire records what the server wrote, one JSON-RPC message per line.
type wire struct {
	mu    sync.Mutex
	lines [][]byte
}

func (w *wire) add(line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, append([]byte{}, line...))
}

// message is the part of a JSON-RPC message the ordering checks need.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProgressToken any    `json:"progressToken"`
		Message       string `json:"message"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
}

func (w *wire) messages(t *testing.T) []message {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []message
	for _, l := range w.lines {
		var m message
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("server wrote a line that is not JSON-RPC: %q", l)
		}
		out = append(out, m)
	}
	return out
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
