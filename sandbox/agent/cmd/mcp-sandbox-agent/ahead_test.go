package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent/proto"
)

// frames is what a test agent sends, kept whole.
type frames struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (f *frames) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buf.Write(p)
}

// result reads command id's output and exit from the frames sent so far.
func (f *frames) result(t *testing.T, id int) (stdout, stderr string, exit proto.Exit) {
	t.Helper()
	f.mu.Lock()
	data := append([]byte{}, f.buf.Bytes()...)
	f.mu.Unlock()
	in := bufio.NewReader(bytes.NewReader(data))
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			t.Fatalf("no exit frame for %d in %q", id, data)
		}
		h := strings.Fields(line)
		n, _ := strconv.Atoi(h[2])
		p := make([]byte, n)
		if _, err := io.ReadFull(in, p); err != nil {
			t.Fatal(err)
		}
		switch h[1] {
		case "out", "err":
			fid, rest, _ := bytes.Cut(p, []byte("\n"))
			if string(fid) != strconv.Itoa(id) {
				continue
			}
			if h[1] == "out" {
				stdout += string(rest)
			} else {
				stderr += string(rest)
			}
		case "exit":
			if err := json.Unmarshal(p, &exit); err != nil {
				t.Fatal(err)
			}
			if exit.ID == id {
				return stdout, stderr, exit
			}
		}
	}
}

func testAgent(t *testing.T) (*agent, *frames) {
	t.Helper()
	f := &frames{}
	a := &agent{nonce: "n", base: os.Environ(), out: bufio.NewWriterSize(f, outBuffer), runs: map[int]*running{}, killed: map[int]bool{}, streams: map[int]*stream{}, listeners: map[int]net.Listener{}}
	t.Cleanup(func() {
		a.mu.Lock()
		a.closing = true
		a.mu.Unlock()
		a.endAhead()
	})
	return a, f
}

func (a *agent) servedCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.served
}

// aheadPid is the pid of the waiting shell, or 0.
func aheadPid(a *agent) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ahead == nil {
		return 0
	}
	return a.ahead.cmd.Process.Pid
}

// shellPath is where this machine has shell name, or the test is skipped.
func shellPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skip(err)
	}
	return p
}

// shells are the shells of this machine the waiting shell is used with.
func shells(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"dash", "bash", "busybox"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		link := filepath.Join(t.TempDir(), "sh")
		if err := os.Symlink(p, link); err != nil {
			t.Fatal(err)
		}
		out[name] = link
	}
	if len(out) == 0 {
		t.Skip("no dash, bash or busybox here")
	}
	return out
}

// A command given to a shell started ahead gives what the same command
// started afresh gives: output, exit code, variables, $0, $#, $-, $$,
// lines and bytes kept exactly; only diagnostics the shell prints for the
// command's own top level differ (they name eval).
func TestAheadRunsAsDashC(t *testing.T) {
	cmds := []string{
		`true`,
		`printf '%s|' "$0" "$#" "$__c" "$__n" "$1" "$-" "$?"; echo`,
		"printf '[%s]\\n' \"  a\\\\b  \" 'x\ny'",
		"echo a\n\n  echo \"b\\\\\"  \n",
		"echo 'a\nb' \\\n c",
		"echo 'a\r\nb'\t",
		`exit 5`,
		`kill -9 $$`,
		`trap 'echo trapped' EXIT; echo x`,
		`cat; read x; echo "[$x]"`,
		`echo "$PWD"; pwd; echo "$AHEAD_T"`,
		`set -e; false; echo not`,
		`f() { return 7; }; f; echo $?`,
		`echo out; echo err >&2; exit 3`,
		strings.Repeat("#", aheadMax-9) + "\necho end",
		`#1`,
		`# echo not`,
		`#2; echo x`,
		``,
		`   `,
	}
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) {
			a, f := testAgent(t)
			id := 0
			run := func(text string) (string, string, int) {
				id++
				a.run(proto.Start{ID: id, Argv: []string{sh, "-c", text}, Env: []string{"AHEAD_T=1"}, Dir: os.TempDir()})
				a.preparing.Wait()
				o, e, x := f.result(t, id)
				return o, e, x.Code
			}
			for _, c := range cmds {
				// Afresh: no shell waits (ended before each).
				a.endAhead()
				wo, we, wc := run(c)
				pid := aheadPid(a)
				if pid == 0 {
					t.Fatalf("no shell started ahead after %q", c)
				}
				served := a.servedCount()
				o, e, code := run(c)
				if a.servedCount() != served+1 {
					t.Errorf("%q was not run by the shell started ahead", c)
				}
				if o != wo || e != we || code != wc {
					t.Errorf("%q ahead: %q %q %d; afresh: %q %q %d", c, o, e, code, wo, we, wc)
				}
			}
			// The command ran as the waiting shell's process.
			pid := aheadPid(a)
			if o, _, _ := run(`echo $$`); o != strconv.Itoa(pid)+"\n" {
				t.Errorf("$$ = %q, want the waiting shell's %d", o, pid)
			}
			// A command not found: the same status, the diagnostic names eval.
			a.endAhead()
			_, we, wc := run(`no-such-command-x`)
			_, e, code := run(`no-such-command-x`)
			if code != wc || code != 127 || !strings.Contains(e, "no-such-command-x") || !strings.Contains(we, "no-such-command-x") {
				t.Errorf("not found: %q %d, afresh %q %d", e, code, we, wc)
			}
		})
	}
}

// A waiting shell is used only for a command it would run exactly as one
// started afresh; else it is ended and the command starts afresh.
func TestAheadOnlyWhenSame(t *testing.T) {
	sh := "/bin/sh"
	if _, err := os.Stat(sh); err != nil {
		t.Skip(err)
	}
	a, f := testAgent(t)
	id := 0
	run := func(s proto.Start) (string, string, int) {
		id++
		s.ID = id
		a.run(s)
		a.preparing.Wait()
		o, e, x := f.result(t, id)
		return o, e, x.Code
	}
	dir := filepath.Join(t.TempDir(), "w")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	echoPid := proto.Start{Argv: []string{sh, "-c", `echo $$`}, Dir: dir}
	used := func(why string, s proto.Start, want string) {
		t.Helper()
		pid := aheadPid(a)
		if pid == 0 {
			t.Fatalf("%s: no shell waiting", why)
		}
		served := a.servedCount()
		o, e, code := run(s)
		if o == strconv.Itoa(pid)+"\n" || a.servedCount() != served {
			t.Errorf("%s: the waiting shell ran it", why)
		}
		if want != "" && o != want {
			t.Errorf("%s: %q %q %d, want %q", why, o, e, code, want)
		}
	}
	run(echoPid)
	pid0 := aheadPid(a)
	served := a.servedCount()
	if o, _, _ := run(echoPid); a.servedCount() != served+1 || o != strconv.Itoa(pid0)+"\n" {
		t.Fatalf("the same command again was not run by the shell started ahead (%q)", o)
	}
	used("environment", proto.Start{Argv: echoPid.Argv, Dir: dir, Env: []string{"X=1"}}, "")
	run(echoPid)
	used("stdin", proto.Start{Argv: echoPid.Argv, Dir: dir, Stdin: &[]byte{}}, "")
	run(echoPid)
	used("directory", proto.Start{Argv: echoPid.Argv, Dir: os.TempDir()}, "")
	run(echoPid)
	used("long text", proto.Start{Argv: []string{sh, "-c", strings.Repeat(" ", aheadMax) + "echo $$"}, Dir: dir}, "")
	run(echoPid)
	used("argv0", proto.Start{Argv: []string{"sh", "-c", "echo $$"}, Dir: dir}, "")
	// The directory removed and made again: same name, another directory.
	run(echoPid)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	used("directory replaced", proto.Start{Argv: []string{sh, "-c", `cat f; echo $$`}, Dir: dir}, "")
	if o, _, _ := run(proto.Start{Argv: []string{sh, "-c", `cat f`}, Dir: dir}); o != "here\n" {
		t.Errorf("after the directory was replaced: %q", o)
	}
	// The program a name finds in PATH replaced by another.
	bin := t.TempDir()
	dash, bash := shellPath(t, "dash"), shellPath(t, "bash")
	if err := os.Symlink(dash, filepath.Join(bin, "sh")); err != nil {
		t.Fatal(err)
	}
	inPath := proto.Start{Argv: []string{"sh", "-c", `echo $$`}, Dir: dir, Env: []string{"PATH=" + bin}}
	run(inPath)
	if err := os.Remove(filepath.Join(bin, "sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bash, filepath.Join(bin, "sh")); err != nil {
		t.Fatal(err)
	}
	used("program replaced", proto.Start{Argv: []string{"sh", "-c", `echo $BASH_VERSION`}, Dir: dir, Env: inPath.Env}, "")
	if o, _, _ := run(proto.Start{Argv: []string{"sh", "-c", `echo ${BASH_VERSION:+bash}`}, Dir: dir, Env: inPath.Env}); o != "bash\n" {
		t.Errorf("after the program was replaced by bash: %q", o)
	}
	// The waiting shell killed (as the sandbox's code can): the command
	// starts afresh, and gives its answer.
	run(echoPid)
	pid := aheadPid(a)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	used("killed", proto.Start{Argv: []string{sh, "-c", `echo ok`}, Dir: dir}, "ok\n")
	// A shell the agent does not know is never started ahead.
	a.endAhead()
	run(proto.Start{Argv: []string{"/bin/true", "-c", "x"}, Dir: dir})
	if aheadPid(a) != 0 {
		t.Error("a shell was started ahead for /bin/true")
	}
}

// The shell started ahead ends with the agent, and ends by itself when the
// agent's end of its fd 3 closes (the agent killed).
func TestAheadEndsWithAgent(t *testing.T) {
	a, _ := testAgent(t)
	a.prepareAhead(&exec.Cmd{Path: "/bin/sh", Args: []string{"/bin/sh", "-c", "true"}, Env: os.Environ()})
	a.mu.Lock()
	w := a.ahead
	a.ahead = nil
	a.mu.Unlock()
	if w == nil {
		t.Skip("no shell started ahead (no dash, bash or busybox as /bin/sh)")
	}
	_ = w.ctl.Close()
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("waiting shell ended with %v, want 0", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiting shell still there after its fd 3 closed")
	}
}
