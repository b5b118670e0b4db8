package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpclient"
)

// server is an mcp-sandbox process under measurement and the MCP client
// session talking to it over its stdin and stdout.
type server struct {
	cmd   *exec.Cmd
	sess  *mcpclient.Session
	watch *logWatch
}

// writeConfig writes the server's config file: the measured image for
// Python (and bash), one warm sandbox, room for the ten-sandbox test, and
// allow as the entries any allowlist sandbox may be given.
func writeConfig(dir string, o Options, allow ...string) (string, error) {
	text := fmt.Sprintf(`[images]
python = %q
bash = %q
pull = %q

[limits]
max_sandboxes = 16

[pool]
size = 1
languages = ["python"]

[network]
allow_domains = %s
`, o.Image, o.Image, o.Pull, tomlStrings(allow))
	if o.Runtime != "" {
		text += fmt.Sprintf("\n[docker]\nruntime = %q\n", o.Runtime)
	}
	p := filepath.Join(dir, "config.toml")
	return p, os.WriteFile(p, []byte(text), 0o600)
}

// tomlStrings is a TOML array of ss.
func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// startServer runs `mcp-sandbox serve --debug` with its own config and
// state directory and connects an MCP client to it.
func startServer(ctx context.Context, o Options, dir string, allow ...string) (*server, error) {
	cfg, err := writeConfig(dir, o, allow...)
	if err != nil {
		return nil, err
	}
	return startServerConfig(ctx, o.Server, dir, cfg)
}

// startServerConfig runs `bin serve --debug` with the config file cfg and
// a state directory in dir, and connects an MCP client to it.
func startServerConfig(ctx context.Context, bin, dir, cfg string) (*server, error) {
	cmd := exec.Command(bin, "serve", "--debug")
	cmd.Env = append(os.Environ(), "MCP_SANDBOX_CONFIG="+cfg, "MCP_SANDBOX_STATE_DIR="+filepath.Join(dir, "state"))
	// The log goes through a pipe of our own, which the server's end of
	// closes when it exits (and ends w.read).
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = stderrW
	w := newLogWatch()
	go func() {
		w.read(stderr)
		stderr.Close()
	}()
	// The server removes its sandboxes and the pool when stdin closes;
	// give it time before the session resorts to SIGTERM.
	sess, err := mcpclient.Start(ctx, cmd, mcpclient.Options{Name: "mcp-sandbox-bench", Version: "1.0", TerminateAfter: time.Minute, Tap: w.tap})
	stderrW.Close()
	if err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	return &server{cmd: cmd, sess: sess, watch: w}, nil
}

// call calls a tool and decodes its structured result into out. A result
// with isError is an error.
func (s *server) call(ctx context.Context, tool string, args map[string]any, out any) error {
	res, err := s.sess.CallTool(ctx, tool, args)
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return fmt.Errorf("%s: %s", tool, res.Text)
	}
	if out == nil {
		return nil
	}
	return res.Decode(out)
}

// runOut is the part of run_code's result the benchmark checks.
type runOut struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	SandboxID string `json:"sandbox_id"`
}

// runCode calls run_code and checks it printed want.
func (s *server) runCode(ctx context.Context, args map[string]any, want string) (runOut, error) {
	var r runOut
	if err := s.call(ctx, "run_code", args, &r); err != nil {
		return r, err
	}
	if r.ExitCode != 0 || r.Stdout != want {
		return r, fmt.Errorf("run_code: exit %d, stdout %q, stderr %q; want %q", r.ExitCode, r.Stdout, r.Stderr, want)
	}
	return r, nil
}

// execTrue calls sandbox_exec true in sandbox id and checks it exited 0.
func (s *server) execTrue(ctx context.Context, id string) error {
	var out struct {
		ExitCode int `json:"exit_code"`
	}
	if err := s.call(ctx, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "true"}, &out); err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return fmt.Errorf("sandbox_exec true: exit %d", out.ExitCode)
	}
	return nil
}

// memory reads the server's resident set from /proc: in all, and split
// into its own data (anonymous) and pages of files it maps (its code and
// read-only data), which the system can drop and read again at any time.
func (s *server) memory() (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return Memory{}, err
	}
	return parseStatus(string(b))
}

// idleMemory samples memory for d and returns the sample with the most
// resident.
func (s *server) idleMemory(ctx context.Context, d time.Duration) (Memory, error) {
	var most Memory
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	end := time.Now().Add(d)
	for {
		m, err := s.memory()
		if err != nil {
			return Memory{}, err
		}
		if m.RSSKB > most.RSSKB {
			most = m
		}
		if time.Now().After(end) {
			return most, nil
		}
		select {
		case <-ctx.Done():
			return Memory{}, ctx.Err()
		case <-t.C:
		}
	}
}

func parseStatus(status string) (Memory, error) {
	var m Memory
	fields := map[string]*int64{"VmRSS:": &m.RSSKB, "RssAnon:": &m.AnonKB, "RssFile:": &m.FileKB}
	found := 0
	for _, line := range strings.Split(status, "\n") {
		for name, dst := range fields {
			if v, ok := strings.CutPrefix(line, name); ok {
				n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					return Memory{}, fmt.Errorf("/proc status %s %q: %v", name, v, err)
				}
				*dst = n
				found++
			}
		}
	}
	if found != len(fields) {
		return Memory{}, errors.New("no VmRSS, RssAnon and RssFile in /proc status")
	}
	return m, nil
}

func (s *server) close() error { return s.sess.Close() }

// logWatch follows the server's log (stderr) for the events the benchmark
// waits on: pooled sandboxes becoming ready and being claimed; and the
// timing of each tool call. It also keeps the last tools/list answer as
// it came over the wire (tap).
type logWatch struct {
	mu      sync.Mutex
	ready   int                     // "warm pool: sandbox ready"
	trims   int                     // "idle: free heap returned to the system"
	claimed int                     // "sandbox created" from the warm pool
	created int                     // "sandbox created", pooled or not
	timings map[string][]callTiming // "tool call timing", by tool
	tools   []byte                  // the last line that answered tools/list
	tail    []string
	changed chan struct{} // closed and replaced on every event
}

func newLogWatch() *logWatch {
	return &logWatch{changed: make(chan struct{}), timings: map[string][]callTiming{}}
}

// tap keeps the server's answer to tools/list as sent.
func (w *logWatch) tap(line []byte) {
	if !bytes.Contains(line, []byte(`"tools":[`)) {
		return
	}
	w.mu.Lock()
	w.tools = append(w.tools[:0], line...)
	w.mu.Unlock()
}

// toolsListLine is the last answer to tools/list as sent.
func (w *logWatch) toolsListLine() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.tools...)
}

func (w *logWatch) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		w.mu.Lock()
		switch {
		case strings.Contains(line, `msg="warm pool: sandbox ready"`):
			w.ready++
		case strings.Contains(line, `msg="idle: free heap returned to the system"`):
			w.trims++
		case strings.Contains(line, `msg="sandbox created"`):
			w.created++
			if strings.Contains(line, `from="warm pool"`) {
				w.claimed++
			}
		case strings.Contains(line, `msg="tool call timing"`):
			if tool, t, ok := parseTiming(line); ok {
				w.timings[tool] = append(w.timings[tool], t)
			}
		}
		w.tail = append(w.tail, line)
		if len(w.tail) > 40 {
			w.tail = w.tail[1:]
		}
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
}

// counts returns pooled sandboxes made ready, claims and creates so far.
func (w *logWatch) counts() (ready, claimed, created int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ready, w.claimed, w.created
}

// waitPooled waits until a pooled sandbox is ready and unclaimed.
func (w *logWatch) waitPooled(ctx context.Context, timeout time.Duration) error {
	err := w.waitFor(ctx, timeout, func() bool { return w.ready > w.claimed })
	if errors.Is(err, errWaitTimedOut) {
		return fmt.Errorf("no warm sandbox ready after %v; server log:\n%s", timeout, w.lastLines())
	}
	return err
}

// waitTrimmed waits until the server has returned its free heap after
// going quiet, at most timeout; it reports whether that happened.
func (w *logWatch) waitTrimmed(ctx context.Context, timeout time.Duration) bool {
	return w.waitFor(ctx, timeout, func() bool { return w.trims > 0 }) == nil
}

var errWaitTimedOut = errors.New("timed out")

// waitFor waits until cond, called under w.mu, holds after an event;
// it fails with errWaitTimedOut after timeout, or with ctx's error.
func (w *logWatch) waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		w.mu.Lock()
		ok, ch := cond(), w.changed
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-t.C:
			return errWaitTimedOut
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (w *logWatch) lastLines() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.tail, "\n")
}
