package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent/proto"
)

// Limits on what the agent accepts; anything larger ends it.
const (
	maxHeader  = 96
	maxPayload = 32 << 20
	chunk      = 32 << 10
	// outBuffer holds a full-sized frame (chunk and its header) with room
	// to spare, so that bufio never splits one into two writes.
	outBuffer  = 64 << 10
	filePrefix = ".mcp-sandbox-agent-" // package agent's FilePrefix

	// drainGrace is how long output is still read after a command has
	// exited while something it left behind holds its pipes open.
	drainGrace = 2 * time.Second
)

type agent struct {
	nonce string
	base  []string // the environment docker gave the agent: an exec's

	// Frames go out through a buffer, flushed as soon as no other frame
	// is waiting to be written: one write (one message through the
	// engine's attach stream) carries a frame's header and payload, and
	// frames sent at the same moment share it.
	wmu     sync.Mutex
	out     *bufio.Writer
	waiting atomic.Int32 // senders in send, written or not

	rbuf []byte // the last frame's payload, reused by the next read

	mu      sync.Mutex
	runs    map[int]*running
	killed  map[int]bool // ids killed before they had started
	streams map[int]*stream

	listeners map[int]net.Listener
	accepted  int // the last stream id an accept opened (even)

	ahead   *ahead // a shell started for the next command (ahead.go)
	closing bool   // the agent is ending: no shell is started ahead
	served  int    // commands run by a shell started ahead

	preparing sync.WaitGroup // shells about to be started ahead
}

func main() {
	// The file it was started from is not needed any more (and sits in the
	// sandbox's workspace).
	if len(os.Args) > 0 && strings.HasPrefix(filepath.Base(os.Args[0]), filePrefix) {
		_ = os.Remove(os.Args[0])
	}
	in := bufio.NewReaderSize(pollableStdin(), 64<<10)
	line, err := in.ReadString('\n')
	if err != nil || len(line) > maxHeader {
		os.Exit(2)
	}
	a := &agent{nonce: strings.TrimSpace(line), base: os.Environ(), out: bufio.NewWriterSize(os.Stdout, outBuffer), runs: map[int]*running{}, killed: map[int]bool{}, streams: map[int]*stream{}, listeners: map[int]net.Listener{}}
	// Version 2 adds streams (package proto); a server that does not know
	// them never sends their frames. Version 3 announces the window the
	// agent gives the server on each stream (proto.AgentWindow).
	a.send("ready", []byte(`{"pid":`+strconv.Itoa(os.Getpid())+`,"version":"3","streams":true,"window":`+strconv.Itoa(proto.AgentWindow)+`}`))
	err = a.serve(in)
	// The server is gone (or spoke nonsense): nothing may outlive it.
	a.mu.Lock()
	a.closing = true
	for _, r := range a.runs {
		killTree(r.pid)
	}
	a.mu.Unlock()
	a.endAhead()
	if err != nil {
		os.Exit(3)
	}
}

// pollableStdin returns stdin through the runtime's poller when it is a
// pipe or a socket (the engine's exec makes it a pipe of the agent's own):
// the goroutine waiting for the next frame then parks instead of holding a
// thread in read(2), and a command started from a frame runs at once on
// that thread rather than once another thread has woken to take it (65 to
// 200 µs of each command here). Anything else stays as it is.
func pollableStdin() *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		return os.Stdin
	}
	if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
		return os.Stdin
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	return os.NewFile(0, "stdin")
}

// serve reads frames until stdin ends.
func (a *agent) serve(in *bufio.Reader) error {
	for {
		kind, payload, err := a.read(in)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch kind {
		case "start":
			var r proto.Start
			if err := json.Unmarshal(payload, &r); err != nil {
				return err
			}
			go a.run(r)
		case "file":
			var r proto.File
			if err := json.Unmarshal(payload, &r); err != nil {
				return err
			}
			go a.doFile(r)
		case "kill":
			var r proto.Kill
			if err := json.Unmarshal(payload, &r); err != nil {
				return err
			}
			a.mu.Lock()
			run, ok := a.runs[r.ID]
			if !ok {
				a.killed[r.ID] = true
			}
			a.mu.Unlock()
			if ok {
				go run.kill()
			}
		case "dial", "data", "credit", "eof", "reset", "listen", "unlisten":
			if err := a.onStream(kind, payload); err != nil {
				return err
			}
		case "killall":
			// The sandbox is being stopped: everything the sandbox user
			// runs goes (the kernel spares the caller), then the agent.
			_ = syscall.Kill(-1, syscall.SIGKILL)
			os.Exit(0)
		default:
			return errors.New("unknown frame")
		}
	}
}

func (a *agent) read(in *bufio.Reader) (string, []byte, error) {
	line, err := in.ReadSlice('\n')
	if err == io.EOF && len(line) == 0 {
		return "", nil, io.EOF
	}
	if err != nil || len(line) > maxHeader {
		return "", nil, errors.New("bad header")
	}
	f := strings.Fields(string(line))
	if len(f) != 3 || f[0] != a.nonce {
		return "", nil, errors.New("bad header")
	}
	n, err := strconv.Atoi(f[2])
	if err != nil || n < 0 || n > maxPayload {
		return "", nil, errors.New("bad length")
	}
	// Every handler is done with a payload before the next read (it
	// copies what it keeps, or decodes it), so the buffer is reused; one
	// grown past a chunk for a large request is not kept.
	if cap(a.rbuf) < n || cap(a.rbuf) > outBuffer {
		a.rbuf = make([]byte, max(n, chunk+maxHeader))
	}
	p := a.rbuf[:n]
	if _, err := io.ReadFull(in, p); err != nil {
		return "", nil, err
	}
	return f[1], p, nil
}

// forward sends what rd yields as kind frames of request id, a chunk at a
// time, until it ends or max bytes are sent. It returns the bytes sent and
// the read error that stopped it (nil at the end or at max).
func (a *agent) forward(kind string, id int, rd io.Reader, max int64) (int64, error) {
	prefix := strconv.Itoa(id) + "\n"
	buf := make([]byte, len(prefix)+chunk)
	copy(buf, prefix)
	var sent int64
	for sent < max {
		n, err := rd.Read(buf[len(prefix) : len(prefix)+int(min(max-sent, chunk))])
		if n > 0 {
			a.send(kind, buf[:len(prefix)+n])
			sent += int64(n)
		}
		if err == io.EOF {
			return sent, nil
		}
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// send writes a frame. The buffer is flushed by the last of the senders
// waiting at once, so a frame never waits for one that is not coming.
func (a *agent) send(kind string, payload []byte) {
	a.waiting.Add(1)
	a.wmu.Lock()
	defer a.wmu.Unlock()
	_, _ = a.out.WriteString(a.nonce)
	_ = a.out.WriteByte(' ')
	_, _ = a.out.WriteString(kind)
	_ = a.out.WriteByte(' ')
	_, _ = a.out.WriteString(strconv.Itoa(len(payload)))
	_ = a.out.WriteByte('\n')
	_, _ = a.out.Write(payload)
	if a.waiting.Add(-1) == 0 {
		_ = a.out.Flush()
	}
}

func (a *agent) exit(m proto.Exit) {
	b, _ := json.Marshal(m)
	a.send("exit", b)
}

// run starts one command in a session (and process group) of its own,
// relays its output as "out"/"err" frames ("ID\n" + bytes), and reports
// how it ended once it has exited and its output has closed (or
// drainGrace has passed), as docker exec does.
func (a *agent) run(r proto.Start) {
	began := time.Now()
	cmd, f, fail := a.command(r)
	if fail != nil {
		a.exit(*fail)
		return
	}
	like := cmd
	var pipes [2]*os.File
	if w := a.takeAhead(cmd, f); w != nil {
		cmd, pipes = w.cmd, w.pipes
	} else {
		var err error
		pipes, err = outputPipes(cmd)
		if err != nil {
			a.exit(proto.Exit{ID: r.ID, Code: -1, Error: err.Error()})
			return
		}
		err = cmd.Start()
		cmd.Stdout.(*os.File).Close()
		cmd.Stderr.(*os.File).Close()
		if err != nil {
			pipes[0].Close()
			pipes[1].Close()
			a.exit(proto.Exit{ID: r.ID, Code: 126, Error: err.Error()})
			return
		}
	}
	defer pipes[0].Close()
	defer pipes[1].Close()
	a.register(r.ID, &running{pid: cmd.Process.Pid, pipes: pipes})
	drained := a.relay(r.ID, pipes)
	err := cmd.Wait()
	// As docker exec does: once the command has exited, its output is read
	// until it closes, but for a short while only; a child left running in
	// the background (`sleep 1000 &`) that holds the pipes keeps running,
	// and the call ends.
	select {
	case <-drained:
	case <-time.After(drainGrace):
		for _, p := range pipes {
			_ = p.Close()
		}
		<-drained
	}
	a.mu.Lock()
	delete(a.runs, r.ID)
	a.mu.Unlock()
	a.exit(proto.Exit{ID: r.ID, Code: exitCode(cmd, err), US: time.Since(began).Microseconds()})
	// The next command's shell starts once this one's answer is on its
	// way: not while the engine and the client still have it to handle.
	a.preparing.Add(1)
	time.AfterFunc(aheadDelay, func() {
		defer a.preparing.Done()
		a.prepareAhead(like)
	})
}

// command checks r and makes the command it asks for, in a session of its
// own, with the agent's environment and r's; or it says, as an exit
// message, why there is none. It also returns the files it found on the
// way.
func (a *agent) command(r proto.Start) (*exec.Cmd, found, *proto.Exit) {
	var f found
	if len(r.Argv) == 0 {
		return nil, f, &proto.Exit{ID: r.ID, Code: -1, Error: "empty command"}
	}
	if r.Dir != "" {
		st, err := os.Stat(r.Dir)
		if err != nil || !st.IsDir() {
			return nil, f, &proto.Exit{ID: r.ID, Code: 126, Error: "working directory " + r.Dir + " does not exist or is not a directory"}
		}
		f.dir = st
	}
	env := append(append([]string{}, a.base...), r.Env...)
	prog, st, err := lookPath(r.Argv[0], env)
	if err != nil {
		return nil, f, &proto.Exit{ID: r.ID, Code: 127, Error: err.Error()}
	}
	f.prog = st
	cmd := &exec.Cmd{Path: prog, Args: r.Argv, Env: env, Dir: r.Dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if r.Stdin != nil {
		cmd.Stdin = bytes.NewReader(*r.Stdin)
	}
	return cmd, f, nil
}

// found is what command found of a command's files: its program (nil when
// it is named by a path, which is not looked up) and its working directory
// (nil for the agent's own).
type found struct {
	prog, dir os.FileInfo
}

// outputPipes gives cmd a pipe for its stdout and one for its stderr, and
// returns their read ends (the caller closes them; cmd's write ends are
// closed once it has started).
func outputPipes(cmd *exec.Cmd) ([2]*os.File, error) {
	var pipes [2]*os.File
	for i := range pipes {
		pr, pw, err := os.Pipe()
		if err != nil {
			for _, p := range pipes[:i] {
				_ = p.Close()
			}
			if i == 1 {
				_ = cmd.Stdout.(*os.File).Close()
			}
			return pipes, err
		}
		pipes[i] = pr
		if i == 0 {
			cmd.Stdout = pw
		} else {
			cmd.Stderr = pw
		}
	}
	return pipes, nil
}

// register records a started command under id, and kills it at once when
// a kill for id came before it had started.
func (a *agent) register(id int, run *running) {
	a.mu.Lock()
	a.runs[id] = run
	early := a.killed[id]
	delete(a.killed, id)
	a.mu.Unlock()
	if early {
		go run.kill()
	}
}

// relay forwards what comes out of pipes as "out" and "err" frames of
// request id, and closes the returned channel once both have ended.
func (a *agent) relay(id int, pipes [2]*os.File) <-chan struct{} {
	var wg sync.WaitGroup
	for i, kind := range []string{"out", "err"} {
		wg.Go(func() {
			_, _ = a.forward(kind, id, pipes[i], math.MaxInt64)
		})
	}
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	return drained
}

// exitCode is how cmd ended, as a shell tells it: its exit status, or 128
// plus the signal that killed it; -1 when waiting for it failed otherwise.
func exitCode(cmd *exec.Cmd, waitErr error) int {
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		if st.Signaled() {
			return 128 + int(st.Signal())
		}
		return st.ExitStatus()
	}
	if waitErr != nil {
		return -1
	}
	return 0
}

// running is a command in progress.
type running struct {
	pid   int
	pipes [2]*os.File // the read ends of its stdout and stderr
}

// kill kills the command's tree, then stops reading its output, so that
// its end is reported at once even when a process that escaped the kill
// (a daemon in a session of its own) still holds the pipes.
func (r *running) kill() {
	killTree(r.pid)
	for _, p := range r.pipes {
		_ = p.Close()
	}
}

// lookPath finds name in env's PATH, as the exec of a container would, and
// returns the file found (nil for a name with a slash, not looked up).
func lookPath(name string, env []string) (string, os.FileInfo, error) {
	if strings.Contains(name, "/") {
		return name, nil, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, st, nil
		}
	}
	return "", nil, errors.New(name + ": executable file not found in $PATH")
}

// killTree stops every process in the tree of root — its descendants, its
// process group and its session — until no new one appears, then kills
// them all. Stopping first means a fork bomb cannot outrun the walk.
func killTree(root int) {
	set := map[int]bool{root: true}
	_ = syscall.Kill(root, syscall.SIGSTOP)
	self := os.Getpid()
	for range 50 {
		grew := false
		d, err := os.Open("/proc")
		if err != nil {
			break
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			p, err := strconv.Atoi(n)
			if err != nil || p == self || set[p] {
				continue
			}
			ppid, pgid, sid, ok := procStat(p)
			if !ok || !(pgid == root || sid == root || set[ppid]) {
				continue
			}
			_ = syscall.Kill(p, syscall.SIGSTOP)
			set[p], grew = true, true
		}
		if !grew {
			break
		}
	}
	for p := range set {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	_ = syscall.Kill(-root, syscall.SIGKILL)
}

// procStat reads a process's parent, process group and session.
func procStat(pid int) (ppid, pgid, sid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 {
		return 0, 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	pgid, _ = strconv.Atoi(f[2])
	sid, _ = strconv.Atoi(f[3])
	return ppid, pgid, sid, true
}
