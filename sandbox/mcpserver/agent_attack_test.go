package mcpserver_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// Attacks on the server through the sandbox's command agent and the
// server's own processes in the sandbox, made from inside the sandbox with
// nothing but tool calls. The agent and the file tools' tar run as the
// sandbox user, so the sandbox's code can stop them (SIGSTOP), kill them
// or take their place; the server must still answer every call in bounded
// time with a clear error.

// stopAgent has the sandbox stop its own command agent (the parent of the
// command's shell) a moment after the command has answered.
func stopAgent(t *testing.T, sess *mcp.ClientSession, id string) {
	t.Helper()
	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": `a=$PPID; case "$(tr '\0' ' ' </proc/$a/cmdline)" in *mcp-sandbox-agent*) ;; *) echo "parent is not the agent: $(tr '\0' ' ' </proc/$a/cmdline)"; exit 3;; esac; ` +
		`(sleep 1; kill -STOP $a) </dev/null >/dev/null 2>&1 & echo stopping $a`})
	mustOK(t, res, "sandbox_exec")
	var got execOut
	structured(t, res, &got)
	if got.ExitCode != 0 {
		t.Fatalf("could not find the agent: %+v", got)
	}
	time.Sleep(2 * time.Second)
}

// timedCall calls a tool and fails the test if the call takes longer than
// limit (the server must not hang); it returns the result, or nil when the
// call failed at the protocol level.
func timedCall(t *testing.T, sess *mcp.ClientSession, limit time.Duration, name string, args map[string]any) (*mcp.CallToolResult, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := sess.CallTool(testContext(t, limit), &mcp.CallToolParams{Name: name, Arguments: args})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s did not answer within %s: %v", name, limit, err)
	}
	return res, took
}

// The sandbox stops its command agent with SIGSTOP. Before the fix a
// write_file of a few MB hung for ever (the server blocked writing the
// command's stdin to an agent that no longer read it, holding the lock
// every later frame needs, sandbox_stop's included) and read_file hung
// for ever (the server's tar never answered, and the file tools had no
// timeout). Now each call fails within the exec timeout (plus the grace
// a kill is given), the stopped agent is dropped, and the next command
// runs in a fresh one.
func TestAttackStoppedAgent(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackStoppedAgent(t, serverEnv)
}

func attackStoppedAgent(t *testing.T, env backendEnv) {
	h := newFenceHome(t)
	sess := startFenceServer(t, env, h, "[limits]\nexec_timeout_seconds = 6\nmax_sandboxes = 1000\n")
	id := createWith(t, sess, nil)
	mustOK(t, call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": "small.txt", "content": "small"}), "write_file")
	// A bound generous enough for a slow engine, far below "for ever".
	const limit = 60 * time.Second

	stopAgent(t, sess, id)
	content := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 6<<20)))
	res, took := timedCall(t, sess, limit, "write_file", map[string]any{"sandbox_id": id, "path": "big.txt", "content": content, "encoding": "base64"})
	if !res.IsError {
		t.Errorf("write_file to a stopped agent succeeded: %s", text(res))
	}
	t.Logf("write_file with a stopped agent: %s after %s", clipText(text(res)), took)

	stopAgent(t, sess, id)
	res, took = timedCall(t, sess, limit, "read_file", map[string]any{"sandbox_id": id, "path": "small.txt"})
	if !res.IsError {
		t.Errorf("read_file through a stopped agent succeeded: %s", text(res))
	}
	t.Logf("read_file with a stopped agent: %s after %s", clipText(text(res)), took)

	res, took = timedCall(t, sess, limit, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo alive"})
	mustOK(t, res, "sandbox_exec after the attack")
	if !strings.Contains(text(res), "alive") {
		t.Errorf("the sandbox does not run commands after its agent was stopped: %s", text(res))
	}
	t.Logf("sandbox_exec afterwards: %s", took)

	// A stop while a write is blocked on the stopped agent returns at once.
	stopAgent(t, sess, id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sess.CallTool(testContext(t, limit), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"sandbox_id": id, "path": "big2.txt", "content": content, "encoding": "base64"}})
	}()
	time.Sleep(500 * time.Millisecond)
	res, took = timedCall(t, sess, limit, "sandbox_stop", map[string]any{"sandbox_id": id})
	mustOK(t, res, "sandbox_stop")
	<-done
	t.Logf("sandbox_stop during a blocked write: %s", took)
	h.check(t)
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// hijackAgent has the sandbox take its command agent's place: it kills the
// agent and, when the server copies a fresh one into the workspace, renames
// testdata/hostile_agent.py over it before the server runs it (a race the
// sandbox wins easily: it has the workspace to itself). It fails the test
// if the server does not end up talking to the hostile agent. The next
// agent the server starts is replaced too.
func hijackAgent(t *testing.T, sess *mcp.ClientSession, id string) {
	t.Helper()
	hijackAgents(t, sess, id, "/workspace/hostile /workspace/hostile2")
}

// hijackAgents is hijackAgent with the hostile agents that replace the
// server's next ones named (hostile, hostile2).
func hijackAgents(t *testing.T, sess *mcp.ClientSession, id, hostiles string) {
	t.Helper()
	for _, f := range []string{"hostile_agent.py", "hijack_agent.py"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		mustOK(t, call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": f, "content": string(b)}), "write_file")
	}
	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": `set -e; ` +
		`{ printf '#!%s\n' "$(command -v python3)"; cat hostile_agent.py; } > hostile && chmod 755 hostile && cp -p hostile hostile2; ` +
		`(python3 hijack_agent.py ` + hostiles + ` </dev/null >/dev/null 2>&1 &); ` +
		`a=$PPID; (sleep 1; kill -KILL $a) </dev/null >/dev/null 2>&1 & echo set`})
	mustOK(t, res, "sandbox_exec")
	time.Sleep(2 * time.Second)
	// A generous timeout: the hostile agent is a Python program, slow to
	// start under gVisor.
	res = call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo probe", "timeout_seconds": 30})
	if !strings.Contains(text(res), "hostile agent here") {
		t.Fatalf("the sandbox could not take the agent's place; the test means nothing: %s", text(res))
	}
}

// peakRSS returns a process's peak resident set in MB (Linux).
func peakRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb >> 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// The sandbox replaces its command agent with a hostile one
// (testdata/hostile_agent.py) and has it lie to the server: output and
// exits for other commands, endless output, a frame over the bound, and
// hostile tar streams for copy_out (a 50 GB file, a size it does not
// keep, "..", terminal escapes and invalid UTF-8 in names, duplicate and
// case-folded names, endless skipped entries, one byte a second). Every
// call must end in bounded time with a clear answer, the server's memory
// must stay bounded, nothing may be written outside the write root (nor a
// staging directory left in it), no raw terminal escape may reach the
// server's log, and the sandbox must run commands again afterwards.
func TestAttackHostileAgent(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackHostileAgent(t, serverEnv)
}

func attackHostileAgent(t *testing.T, env backendEnv) {
	h := newFenceHome(t)
	p := startServer(t, env(t, h.config("[limits]\nexec_timeout_seconds = 6\nmax_sandboxes = 1000\n")))
	sess := sdkClient(t, p, nil)
	id := createWith(t, sess, nil)
	hijackAgent(t, sess, id)
	// exec timeout (6 s) + the kill's grace (15 s) + a slow engine's margin
	const limit = 45 * time.Second

	res, _ := timedCall(t, sess, limit, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "hostile:others"})
	var got execOut
	structured(t, res, &got)
	if got.Stdout != "mine\n" || got.ExitCode != 0 {
		t.Errorf("output or exit meant for other commands reached this one: %+v", got)
	}

	for _, mode := range []string{"huge", "lying", "dotdot", "names", "dup", "endless", "slow"} {
		mustOK(t, call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "hostile:tar-mode " + mode}), "tar-mode")
		res, took := timedCall(t, sess, limit, "copy_out", map[string]any{"sandbox_id": id, "path": "x", "host_path": "m-" + mode})
		t.Logf("copy_out, %s: %s after %s", mode, clipText(text(res)), took.Round(time.Millisecond))
		if !res.IsError {
			t.Errorf("copy_out of a hostile archive (%s) succeeded: %s", mode, text(res))
		}
		if strings.ContainsAny(text(res), "\x1b\x07") {
			t.Errorf("copy_out (%s) answered with a raw terminal escape: %q", mode, text(res))
		}
		if _, err := os.Lstat(filepath.Join(h.out, "m-"+mode)); err == nil {
			t.Errorf("copy_out (%s) left m-%s on the host", mode, mode)
		}
	}

	res, took := timedCall(t, sess, limit, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "hostile:bigframe"})
	t.Logf("a frame over the bound: %s after %s", clipText(text(res)), took.Round(time.Millisecond))
	if !res.IsError || !strings.Contains(text(res), "agent stopped") {
		t.Errorf("a frame over the bound was taken: %s", text(res))
	}
	// The next command starts a fresh agent, which the sandbox takes over
	// again (hijack_agent.py waits for it), to flood it.
	res, took = timedCall(t, sess, limit, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "hostile:flood", "timeout_seconds": 3})
	got = execOut{}
	structured(t, res, &got)
	t.Logf("endless output: %d + %d bytes returned, truncated %v, timed out %v, after %s: %s", len(got.Stdout), len(got.Stderr), got.Truncated, got.TimedOut, took.Round(time.Millisecond), clipText(text(res)))
	// Cut at the timeout and the output cap; or, when the flood garbled
	// the stream (as it may under gVisor), the connection ended.
	ended := res.IsError && strings.Contains(text(res), "agent stopped")
	if !ended && (!got.TimedOut || len(got.Stdout) > 70000 || len(got.Stderr) > 70000) {
		t.Errorf("endless output was not cut at the timeout and the output cap: %s", clipText(text(res)))
	}
	if mb := peakRSS(t, p.cmd.Process.Pid); mb > 200 {
		t.Errorf("the server's peak memory was %d MB after the hostile agent's replies", mb)
	} else {
		t.Logf("server peak RSS: %d MB", mb)
	}
	// The hostile agent is cut off by a broken frame again; the server
	// has started three agents by now, so commands go through the engine.
	timedCall(t, sess, limit, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "hostile:bigframe"})
	res, _ = timedCall(t, sess, limit, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo back; ls -a /workspace"})
	if !strings.Contains(text(res), "back") || strings.Contains(text(res), "hostile agent here") {
		t.Errorf("the sandbox does not run commands again after the hostile agent: %s", text(res))
	}
	if strings.ContainsAny(p.stderr.String(), "\x1b\x07") {
		t.Errorf("a raw terminal escape reached the server's log")
	}
	h.check(t)
}

// Special files and files that change during a copy, both ways: FIFOs and
// a listening socket in the copied tree (which must not block either
// side), hard links (inside the sandbox to a file outside the copied
// tree; to the image's files, which the kernel refuses across file
// systems), and a file that grows while it is copied. Each copy must end
// in bounded time; copy_out makes none of the special files on the host.
func TestAttackSpecialFilesInCopies(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackSpecialFilesInCopies(t, serverEnv)
}

func attackSpecialFilesInCopies(t *testing.T, env backendEnv) {
	h := newFenceHome(t)
	sess := startFenceServer(t, env, h, "[limits]\nmax_sandboxes = 1000\n")
	id := createWith(t, sess, nil)
	const limit = 60 * time.Second

	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": `set -e; mkdir -p tree; cd tree; echo data > file; mkfifo fifo; ` +
		`echo secret > ../other; ln ../other hard; ln /etc/passwd passwd 2>/dev/null && echo LINKED-ETC || echo no-cross-fs-link; ` +
		`python3 -c 'import socket,os; s=socket.socket(socket.AF_UNIX); s.bind("sock"); s.listen(); os.fork() or __import__("time").sleep(120)' </dev/null >/dev/null 2>&1 & ` +
		`(while :; do head -c 65536 /dev/zero >> grow; [ $(wc -c < grow) -lt 20000000 ] || : > grow; done) </dev/null >/dev/null 2>&1 & sleep 1; ls -l`})
	mustOK(t, res, "set-up")
	if strings.Contains(text(res), "LINKED-ETC") {
		t.Logf("the sandbox could hard-link /etc/passwd into its workspace: %s", text(res))
	}
	res, took := timedCall(t, sess, limit, "copy_out", map[string]any{"sandbox_id": id, "path": "tree", "host_path": "tree"})
	t.Logf("copy_out: %s after %s", clipText(text(res)), took.Round(time.Millisecond))
	if !res.IsError {
		var got struct {
			Skipped map[string]int `json:"skipped"`
		}
		structured(t, res, &got)
		if got.Skipped["device or special file"] < 1 {
			t.Errorf("the FIFO was not skipped: %+v", got)
		}
	}
	filepath.WalkDir(filepath.Join(h.out, "tree"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !d.Type().IsRegular() {
			t.Errorf("copy_out made a special file on the host: %s (%s)", p, d.Type())
		}
		if err == nil && d.Name() == "passwd" {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "root:") {
				t.Errorf("copy_out brought the image's /etc/passwd through a hard link: %s", p)
			}
		}
		return nil
	})

	// The host side: a FIFO with no writer, a listening socket and a file
	// that grows during copy_in.
	src := filepath.Join(h.home, "src", "special")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "plain.txt"), []byte("plain\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(src, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(src, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		f, _ := os.OpenFile(filepath.Join(src, "grow"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		defer f.Close()
		chunk := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
				f.Write(chunk)
				if st, _ := f.Stat(); st != nil && st.Size() > 50<<20 {
					f.Truncate(0)
				}
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	res, took = timedCall(t, sess, limit, "copy_in", map[string]any{"sandbox_id": id, "host_path": src})
	t.Logf("copy_in: %s after %s", clipText(text(res)), took.Round(time.Millisecond))
	if !res.IsError {
		res = call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "find /workspace/special ! -type f ! -type d"})
		var got execOut
		structured(t, res, &got)
		if strings.TrimSpace(got.Stdout) != "" {
			t.Errorf("copy_in made special files in the sandbox: %s", got.Stdout)
		}
	}
	// The check is about what the copies did: the source tree goes.
	close(stop)
	<-stopped
	l.Close()
	os.RemoveAll(src)
	h.check(t)
}

// The sandbox's env (sandbox_create's, and a command's own) aims at the
// server's own processes in the sandbox: TAR_OPTIONS that would send
// every extracted file to a command that leaves a mark instead of to the
// disk, ENV, BASH_ENV, SHELL, TMPDIR, GCONV_PATH (PATH, LD_PRELOAD and
// the like are refused at the door). The file
// tools, the agent's start (after the sandbox killed it) and, once the
// agent is given up, the docker exec path must all run untouched.
func TestAttackEnvReachesServerProcesses(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackEnvReachesServerProcesses(t, serverEnv)
}

func attackEnvReachesServerProcesses(t *testing.T, env backendEnv) {
	h := newFenceHome(t)
	sess := startFenceServer(t, env, h, "[limits]\nmax_sandboxes = 1000\n")
	hostile := map[string]any{
		"TAR_OPTIONS": "--to-command=/workspace/evil/mark",
		"ENV":         "/workspace/evil/mark",
		"BASH_ENV":    "/workspace/evil/mark",
		"GCONV_PATH":  "/workspace/evil",
		"TMPDIR":      "/workspace/evil",
		"SHELL":       "/workspace/evil/mark",
	}
	id := createWith(t, sess, map[string]any{"env": hostile})
	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "env": hostile, "command": `set -e; mkdir -p evil; cd evil; ` +
		`printf '#!/bin/sh\necho "$0 $*" >> /workspace/pwned\ncat >/dev/null\n' > mark; ` +
		`chmod 755 mark; echo "$TAR_OPTIONS"`})
	mustOK(t, res, "set-up")
	if !strings.Contains(text(res), "--to-command") {
		t.Fatalf("the sandbox did not get its env; the test means nothing: %s", text(res))
	}
	src := filepath.Join(h.home, "src", "data.txt")
	round := func(name string) {
		t.Helper()
		for _, p := range []string{"/workspace/w.txt", "/tmp/w.txt"} {
			mustOK(t, call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": p, "content": "written"}), name+": write_file "+p)
			res := call(t, sess, "read_file", map[string]any{"sandbox_id": id, "path": p})
			mustOK(t, res, name+": read_file "+p)
			if !strings.Contains(text(res), "written") {
				t.Errorf("%s: %s holds %q, not what write_file wrote (was the server's tar steered?)", name, p, text(res))
			}
			mustOK(t, call(t, sess, "list_files", map[string]any{"sandbox_id": id, "path": path.Dir(p)}), name+": list_files")
			mustOK(t, call(t, sess, "copy_out", map[string]any{"sandbox_id": id, "path": p, "host_path": name + p, "overwrite": true}), name+": copy_out")
		}
		mustOK(t, call(t, sess, "copy_in", map[string]any{"sandbox_id": id, "host_path": src, "dest_path": "/tmp/in-" + name}), name+": copy_in")
	}
	round("agent")
	// The sandbox kills its agent until the server gives it up: the agent
	// is copied in again each time, then commands go through docker exec.
	execPath := func() string {
		var list struct {
			Sandboxes []struct {
				SandboxID string `json:"sandbox_id"`
				Exec      string `json:"exec"`
			} `json:"sandboxes"`
		}
		structured(t, call(t, sess, "sandbox_list", map[string]any{}), &list)
		for _, s := range list.Sandboxes {
			if s.SandboxID == id {
				return s.Exec
			}
		}
		return ""
	}
	for i := 0; i < 6 && execPath() != "docker exec"; i++ {
		call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": `case "$(tr '\0' ' ' </proc/$PPID/cmdline)" in *mcp-sandbox-agent*) kill -KILL $PPID;; esac`, "env": hostile})
	}
	if p := execPath(); p != "docker exec" {
		t.Fatalf("the agent was not given up after the sandbox killed it again and again: exec %q", p)
	}
	round("engine")
	res = call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "cat /workspace/pwned 2>/dev/null; echo end"})
	var got execOut
	structured(t, res, &got)
	if got.Stdout != "end\n" {
		t.Errorf("the sandbox's env steered the server's own processes:\n%s", got.Stdout)
	}
	h.check(t)
}

// read_file through the agent of files that never end: one that a
// background loop keeps growing, to 50 MB (the agent's read loop is bounded by
// max_bytes, not by the file's end), /dev/zero reached through a link in
// the workspace, and a FIFO nobody writes. Each call answers within the
// limit, returns at most max_bytes marked truncated, or refuses.
func TestAttackReadEndlessFiles(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackReadEndlessFiles(t, serverEnv)
}

func attackReadEndlessFiles(t *testing.T, env backendEnv) {
	h := newFenceHome(t)
	sess := startFenceServer(t, env, h, "[limits]\nmax_sandboxes = 1000\n")
	id := createWith(t, sess, nil)
	const limit = 60 * time.Second
	res, took := timedCall(t, sess, limit, "sandbox_exec", map[string]any{"sandbox_id": id, "command": `set -e; mkfifo fifo; ln -s /dev/zero zero; ` +
		`python3 -c 'import time; f = open("grow", "ab", buffering=0); [(f.write(bytes(65536)), time.sleep(0.005)) for _ in range(800)]' </dev/null >/dev/null 2>&1 & ` +
		`for i in $(seq 200); do [ $(wc -c < grow 2>/dev/null || echo 0) -gt 2000000 ] && break; sleep 0.1; done; wc -c < grow`})
	t.Logf("set-up: %s after %s", clipText(text(res)), took.Round(time.Millisecond))
	mustOK(t, res, "set-up")

	const max = 1 << 20
	res, took = timedCall(t, sess, limit, "read_file", map[string]any{"sandbox_id": id, "path": "grow", "max_bytes": max})
	t.Logf("read_file grow: %s after %s", clipText(text(res)), took.Round(time.Millisecond))
	if res.IsError {
		t.Fatalf("read_file of a growing file failed: %s", text(res))
	}
	var got struct {
		Content   string `json:"content"`
		Encoding  string `json:"encoding"`
		Truncated bool   `json:"truncated"`
	}
	structured(t, res, &got)
	n := len(got.Content)
	if got.Encoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(got.Content)
		if err != nil {
			t.Fatalf("content is not base64: %v", err)
		}
		n = len(b)
	}
	if n > max || !got.Truncated {
		t.Errorf("read_file of a growing file gave %d bytes (truncated %v), want at most %d, truncated", n, got.Truncated, max)
	}

	for _, p := range []string{"zero", "fifo"} {
		res, took := timedCall(t, sess, limit, "read_file", map[string]any{"sandbox_id": id, "path": p, "max_bytes": max})
		t.Logf("read_file %s: %s after %s", p, clipText(text(res)), took.Round(time.Millisecond))
		if !res.IsError {
			t.Errorf("read_file of %s succeeded: %s", p, clipText(text(res)))
		}
	}
	h.check(t)
}

// The hostile agent answers a list request with an entry outside the
// directory asked for: an answer that breaks what was asked. The contract
// ends such an agent. Before the fix the call failed but the agent kept
// receiving the sandbox's next commands (and answered "hostile agent
// here"); now nothing more is sent to it (its log ends with the list
// request) and the next command starts a fresh, real agent.
func TestAttackAgentBadAnswerEndsIt(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackAgentBadAnswerEndsIt(t, serverEnv)
}

func attackAgentBadAnswerEndsIt(t *testing.T, env backendEnv) {
	p := startServer(t, env(t, "[limits]\nexec_timeout_seconds = 6\nmax_sandboxes = 1000\n"))
	sess := sdkClient(t, p, nil)
	id := createWith(t, sess, nil)
	hijackAgents(t, sess, id, "/workspace/hostile")
	const limit = 45 * time.Second

	res, took := timedCall(t, sess, limit, "list_files", map[string]any{"sandbox_id": id, "path": "/workspace"})
	t.Logf("list_files through the lying agent: %s after %s", clipText(text(res)), took.Round(time.Millisecond))
	if !res.IsError || !strings.Contains(text(res), "invalid answer") {
		t.Errorf("an impossible listing was taken: %s", text(res))
	}
	res, _ = timedCall(t, sess, limit, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo probe; cat /workspace/hostile-*.log", "timeout_seconds": 30})
	got := text(res)
	if res.IsError || strings.Contains(got, "hostile agent here") || !strings.Contains(got, "probe") {
		t.Fatalf("the next command did not go to a fresh agent: %s", got)
	}
	// The hostile agent's log: the hijack's probe, the list request, and
	// nothing after it.
	if !strings.Contains(got, "start\nfile list\n") || strings.Contains(got, "file list\nstart") {
		t.Errorf("the ended agent was sent more after its bad answer; its log:\n%s", got)
	}
}

// A hostile agent behind sandbox_expose: one that sends far beyond the
// credit it was given (256 MB) costs the server a stream and at most its
// window, one that speaks of a stream the server never opened loses its
// connection, and neither holds up a tool call; an agent that carries no
// streams (an older one) makes sandbox_expose fail, and the sandbox gets
// no network instead.
func TestAttackHostileAgentStreams(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackHostileAgentStreams(t, serverEnv)
}

func attackHostileAgentStreams(t *testing.T, env backendEnv) {
	p := startServer(t, env(t, "[limits]\nmax_sandboxes = 1000\n"))
	sess := sdkClient(t, p, nil)
	id := createWith(t, sess, nil)
	hijackAgent(t, sess, id)
	res := call(t, sess, "sandbox_expose", map[string]any{"sandbox_id": id, "port": 8000})
	mustOK(t, res, "sandbox_expose")
	var x struct {
		URL string `json:"url"`
	}
	structured(t, res, &x)
	client := &http.Client{Timeout: 60 * time.Second}
	if resp, err := client.Get(x.URL); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hostile" {
			t.Fatalf("the hostile agent's well-behaved answer: %d %q", resp.StatusCode, b)
		}
	}

	mustOK(t, call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "hostile:stream-mode flood"}), "stream-mode")
	resp, err := client.Get(x.URL)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 64<<10)
	_, _ = io.ReadFull(resp.Body, head)
	time.Sleep(2 * time.Second) // the flood arrives while nobody reads
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	t.Logf("flood: read %d bytes more, then %v", n, err)
	// The flood never ends by itself: a response that ends at all, within
	// the client's minute, was cut by the server. It may end as an error
	// or, the preview's body being delimited by the connection's close, as
	// a clean end (seen under runsc and on Kubernetes since agent protocol
	// 3); either way, what came through must stay within the credit.
	if n > 32<<20 {
		t.Errorf("a flood beyond the credit was carried: %d bytes, %v", n, err)
	}
	start := time.Now()
	res = call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo still", "timeout_seconds": 30})
	var after execOut
	structured(t, res, &after)
	if res.IsError || after.Stdout != "hostile agent here\n" {
		t.Errorf("a call after the flood (the same agent answers): %s", text(res))
	}
	t.Logf("a call after the flood answered in %s", time.Since(start).Round(time.Millisecond))
	if mb := peakRSS(t, p.cmd.Process.Pid); mb > 100 {
		t.Errorf("the server's peak memory was %d MB after a 256 MB flood", mb)
	} else {
		t.Logf("server peak RSS: %d MB", mb)
	}

	mustOK(t, call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "hostile:stream-mode stranger"}), "stream-mode")
	if resp, err := client.Get(x.URL); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "never opened") {
			t.Errorf("a frame for a stream never opened: %d %q", resp.StatusCode, b)
		}
	}

	// An agent without streams: sandbox_expose says so.
	old := createWith(t, sess, nil)
	mustOK(t, call(t, sess, "write_file", map[string]any{"sandbox_id": old, "path": "agent-v1", "content": "1"}), "write_file")
	hijackAgent(t, sess, old)
	res = call(t, sess, "sandbox_expose", map[string]any{"sandbox_id": old, "port": 8000})
	if !res.IsError || !strings.Contains(text(res), "carries no connections") || !strings.Contains(text(res), "no network") {
		t.Errorf("sandbox_expose through an agent without streams: %s", text(res))
	}
}
