package agentconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// ErrDied is returned for a command whose agent ended (or broke the
// protocol) before the command did: whether it ran, and how far, is
// unknown, so it is reported, never run again.
var ErrDied = errors.New("the sandbox's command agent stopped")

// ErrUnusable: the agent cannot run in this sandbox (no binary for its
// architecture, no tools to copy it in, or it did not start).
var ErrUnusable = errors.New("the command agent cannot run in this sandbox")

// Conn is a running agent (package agent), reached over an attached
// exec. Everything it says is treated as hostile: frames are bounded, output
// for a command goes only to that command's bounded captures, and a frame
// that breaks the protocol ends the connection.
type Conn struct {
	nonce string
	proc  backend.Process
	diag  *headBuffer // the agent's own stderr, for error messages
	ready chan struct{}

	deadOnce sync.Once
	dead     chan struct{}
	deadErr  error

	wmu sync.Mutex // one frame at a time to the agent

	mu     sync.Mutex
	nextID int
	calls  map[int]*agentCall

	mux streamMux // byte streams into the sandbox (stream.go)
}

// agentCall is a command in progress: where its output and exit go.
type agentCall struct {
	stdout, stderr io.Writer
	exit           chan agent.Exit
	file           chan agent.FileDone // a file request's end
}

// Attacher is what Start needs of the backend: an exec to copy the agent
// in, and an attached exec to run it.
type Attacher interface {
	backend.Attacher
	Exec(ctx context.Context, containerID string, spec backend.ExecSpec) (backend.ExecStatus, error)
}

// StartRequest says where an agent starts and with what.
type StartRequest struct {
	ContainerID string
	User        string   // the sandbox user, who runs the agent
	Arch        string   // the engine's architecture (agent.Has must know it)
	Cat, Chmod  string   // the image's tools that copy the agent in
	Env         []string // the copy's environment (the agent's is the image's)
	Dir         string   // a writable, executable directory: the workspace
	Budget      *Budget  // the server's streams, shared by its agents (nil: none)
	// Staged is the agent's file already copied in (by Stage, before any
	// code ran in the container): Start only runs it. "" copies it first.
	Staged string
}

// readyTimeout bounds the wait for a started agent's ready frame.
const readyTimeout = 20 * time.Second

// Start copies the agent for req.Arch into req.Dir (as the sandbox user)
// and starts it there, attached. An error wrapping ErrUnusable means it
// cannot run in this sandbox; commands go through the engine then.
func Start(ctx context.Context, at Attacher, req StartRequest) (*Conn, error) {
	if !agent.Has(req.Arch) {
		return nil, fmt.Errorf("%w: no agent for architecture %q", ErrUnusable, req.Arch)
	}
	c := newConn(runner.NewNonce(), req.Budget)
	// /tmp is mounted noexec: the agent goes to the workspace, and removes
	// its file once it runs.
	file := req.Staged
	if file == "" {
		file = req.Dir + "/" + agent.FilePrefix + c.nonce[:12]
		if err := copyAgent(ctx, at, req, file); err != nil {
			return nil, err
		}
	}
	dec := c.decoder()
	// No Env: the agent's environment is what the engine gives any exec
	// (the image's), to which each command adds its own.
	proc, err := at.Attach(ctx, req.ContainerID, backend.ExecSpec{
		Cmd: []string{file}, WorkDir: req.Dir, User: req.User, Stdout: dec, Stderr: c.diag,
	})
	if err != nil {
		return nil, err
	}
	c.proc = proc
	go c.watch()
	_, _ = proc.Write([]byte(c.nonce + "\n"))
	if err := c.awaitReady(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// copyAgent writes the agent's binary to file, executable by the user only.
func copyAgent(ctx context.Context, at Attacher, req StartRequest, file string) error {
	bin := agent.Open(req.Arch)
	if bin == nil {
		return fmt.Errorf("%w: the agent for %q does not decompress", ErrUnusable, req.Arch)
	}
	defer bin.Close()
	stderr := &headBuffer{n: 4096}
	st, err := at.Exec(ctx, req.ContainerID, backend.ExecSpec{
		Cmd:   []string{"/bin/sh", "-c", `umask 077; set -C; "$1" >"$3" && "$2" 700 "$3"`, "mcp-sandbox-agent-copy", req.Cat, req.Chmod, file},
		Env:   req.Env,
		User:  req.User,
		Stdin: bin,
		// Stdout is not read; stderr is bounded.
		Stderr: stderr,
	})
	if err != nil {
		return err
	}
	if st.ExitCode != 0 {
		return fmt.Errorf("%w: copying the agent into the workspace failed (exit %d): %s", ErrUnusable, st.ExitCode, bytes.TrimSpace(stderr.bytes()))
	}
	return nil
}

// watch is owned by c: it ends when the agent's output does, or cuts the
// connection once c is dead (a broken protocol, an agent that stopped
// reading or answering), so nothing more it sends is read and no write
// to it stays blocked.
func (c *Conn) watch() {
	select {
	case <-c.proc.Done():
	case <-c.dead:
		c.proc.Close()
	}
	c.fail(errors.New("the agent exited"))
}

// awaitReady waits for the agent's ready frame; the agent is killed if it
// does not come.
func (c *Conn) awaitReady(ctx context.Context) error {
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case <-c.ready:
		return nil
	case <-c.dead:
		c.Kill(ctx)
		return fmt.Errorf("%w: the agent did not start (%v): %s", ErrUnusable, c.deadErr, c.diagText())
	case <-t.C:
		c.Kill(ctx)
		return fmt.Errorf("%w: the agent did not start within %s: %s", ErrUnusable, readyTimeout, c.diagText())
	case <-ctx.Done():
		c.Kill(ctx)
		return ctx.Err()
	}
}

// newConn returns a connection, not attached yet, whose streams share
// the server's budget.
func newConn(nonce string, budget *Budget) *Conn {
	return &Conn{
		nonce: nonce, diag: &headBuffer{n: 4096}, ready: make(chan struct{}),
		dead: make(chan struct{}), calls: map[int]*agentCall{},
		mux: streamMux{streams: map[int]*Stream{}, listeners: map[int]*listener{}, budget: budget},
	}
}

// decoder reads the agent's output into c's frames.
func (c *Conn) decoder() *runner.Decoder {
	return runner.NewDecoder(c.nonce, c.onFrame, c.fail).Limit(agent.MaxFrame, agent.KindExit, agent.KindFileDone,
		agent.KindDialed, agent.KindData, agent.KindCredit, agent.KindEOF, agent.KindReset,
		agent.KindListening, agent.KindAccept)
}

func (c *Conn) diagText() string {
	s := bytes.TrimSpace(c.diag.bytes())
	if len(s) == 0 {
		return "no message"
	}
	return string(s)
}

// onFrame receives the agent's frames from the backend's output goroutine.
func (c *Conn) onFrame(f runner.Frame) {
	switch f.Kind {
	case runner.KindReady:
		select {
		case <-c.ready:
		default:
			// An agent that carries streams says so; one that does not
			// (or says nothing readable) is never sent their frames.
			var r struct {
				Streams bool `json:"streams"`
				Window  int  `json:"window"`
			}
			_ = json.Unmarshal(f.Payload, &r)
			c.mux.mu.Lock()
			c.mux.ok = r.Streams
			c.mux.window = agentWindow(r.Window)
			c.mux.mu.Unlock()
			close(c.ready)
		}
	case agent.KindDialed, agent.KindData, agent.KindCredit, agent.KindEOF, agent.KindReset,
		agent.KindListening, agent.KindAccept:
		c.onStream(f)
	case runner.KindOut, runner.KindErr:
		i := bytes.IndexByte(f.Payload, '\n')
		id, err := strconv.Atoi(string(f.Payload[:max(i, 0)]))
		if i < 0 || err != nil {
			c.fail(fmt.Errorf("%w: output frame without a command id", runner.ErrProtocol))
			return
		}
		c.mu.Lock()
		call := c.calls[id]
		c.mu.Unlock()
		if call == nil {
			return // a command already answered (or never asked for)
		}
		w := call.stdout
		if f.Kind == runner.KindErr {
			w = call.stderr
		}
		_, _ = w.Write(f.Payload[i+1:])
	case agent.KindExit:
		var x agent.Exit
		if err := json.Unmarshal(f.Payload, &x); err != nil {
			c.fail(fmt.Errorf("%w: bad exit frame: %v", runner.ErrProtocol, err))
			return
		}
		call := c.take(x.ID)
		if call != nil && call.exit == nil {
			c.fail(fmt.Errorf("%w: an exit frame answering a file request", runner.ErrProtocol))
			return
		}
		if call != nil {
			call.exit <- x
		}
	case agent.KindFileDone:
		var x agent.FileDone
		if err := json.Unmarshal(f.Payload, &x); err != nil {
			c.fail(fmt.Errorf("%w: bad filedone frame: %v", runner.ErrProtocol, err))
			return
		}
		call := c.take(x.ID)
		if call != nil && call.file == nil {
			c.fail(fmt.Errorf("%w: a filedone frame answering a command", runner.ErrProtocol))
			return
		}
		if call != nil {
			call.file <- x
		}
	default:
		c.fail(fmt.Errorf("%w: unexpected %q frame from the agent", runner.ErrProtocol, f.Kind))
	}
}

func (c *Conn) fail(err error) {
	c.deadOnce.Do(func() {
		c.deadErr = err
		close(c.dead)
	})
}

// died is ErrDied with why the connection ended; only once c.dead is
// closed.
func (c *Conn) died() error { return fmt.Errorf("%w (%v)", ErrDied, c.deadErr) }

// diedOr is err as ErrDied: as it is when it already says why the
// connection ended, else wrapped.
func diedOr(err error) error {
	if errors.Is(err, ErrDied) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrDied, err)
}

// Gone reports whether the agent has ended or broken the protocol.
func (c *Conn) Gone() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

func (c *Conn) send(ctx context.Context, kind string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.write(ctx, runner.AppendFrame(nil, c.nonce, kind, b))
}

// write writes one frame to the agent. The agent runs as the sandbox user,
// who can stop it (SIGSTOP): a write it does not take in before ctx ends
// ends the connection (a frame written in part cannot be taken back), and
// watch then cuts it, which ends the write, so no call, and no later frame,
// waits for ever. The write is made here, not handed to a goroutine: it
// returns only once the frame's bytes are no longer read.
func (c *Conn) write(ctx context.Context, frame []byte) error {
	stop := context.AfterFunc(ctx, func() { c.fail(errors.New("the agent stopped reading its input")) })
	c.wmu.Lock()
	var err error
	if c.Gone() {
		err = c.died()
	} else if _, err = c.proc.Write(frame); err != nil && c.Gone() {
		err = c.died()
	}
	c.wmu.Unlock()
	if !stop() {
		return ctx.Err()
	}
	return err
}

// ExecRequest is a command for the agent to run.
type ExecRequest struct {
	Spec backend.ExecSpec // Cmd, Env, WorkDir, Stdin, Stdout, Stderr (User is the agent's)
	// Fallback runs a command whose stdin is over agent.MaxStdin (the
	// engine's exec), its stdin whole.
	Fallback func(ctx context.Context, spec backend.ExecSpec) (backend.ExecStatus, error)
	// Stopped, when it ends, means the container has stopped: no grace is
	// given for the agent's answer then.
	Stopped <-chan struct{}
}

// Exec runs req through the agent, with Backend.Exec's contract: it
// returns when the command has exited and its output has closed; when ctx
// ends first, the agent kills the command's tree and Exec returns
// ctx.Err().
func (c *Conn) Exec(ctx context.Context, req ExecRequest) (backend.ExecStatus, error) {
	spec := req.Spec
	var stdin *[]byte
	if spec.Stdin != nil {
		b, err := io.ReadAll(io.LimitReader(spec.Stdin, agent.MaxStdin+1))
		if err != nil {
			return backend.ExecStatus{}, fmt.Errorf("read stdin: %w", err)
		}
		if len(b) > agent.MaxStdin {
			spec.Stdin = io.MultiReader(bytes.NewReader(b), spec.Stdin)
			return req.Fallback(ctx, spec)
		}
		stdin = &b
	}
	call := &agentCall{stdout: orDiscard(spec.Stdout), stderr: orDiscard(spec.Stderr), exit: make(chan agent.Exit, 1)}
	id := c.register(call)
	defer c.take(id)
	if err := c.send(ctx, agent.KindStart, agent.Start{ID: id, Argv: spec.Cmd, Env: spec.Env, Dir: spec.WorkDir, Stdin: stdin}); err != nil {
		c.fail(err)
	}
	select {
	case x := <-call.exit:
		if x.Code == 127 && x.Error != "" {
			_, _ = io.WriteString(call.stderr, clipString(x.Error, 512)+"\n")
		}
		return exitStatus(x)
	case <-c.dead:
		return backend.ExecStatus{ExitCode: -1}, fmt.Errorf("%w (%v) while the command ran; it may have run partly and was not run again", ErrDied, c.deadErr)
	case <-ctx.Done():
	}
	// The agent answers once the tree is killed (it stops reading output
	// then, so nothing that escaped can hold it up); the wait is bounded
	// for an agent that does not answer, which is then given up.
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killGrace)
	defer cancel()
	_ = c.send(gctx, agent.KindKill, agent.Kill{ID: id})
	select {
	case x := <-call.exit:
		st, _ := exitStatus(x)
		st.Killed = true
		return st, ctx.Err()
	case <-c.dead:
	case <-req.Stopped:
	case <-gctx.Done():
		c.fail(errors.New("the agent did not answer a kill"))
	}
	return backend.ExecStatus{ExitCode: -1, Killed: true}, ctx.Err()
}

// register gives call the next request id.
func (c *Conn) register(call *agentCall) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	c.calls[c.nextID] = call
	return c.nextID
}

// take removes and returns the call waiting on id (nil if none is: it was
// answered, or never asked for).
func (c *Conn) take(id int) *agentCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.calls[id]
	delete(c.calls, id)
	return call
}

// file has the agent do one file request; the bytes it sends go to out.
// When ctx ends first, file returns ctx.Err() (the agent finishes the
// request, whose answer is then dropped).
func (c *Conn) file(ctx context.Context, req agent.File, out io.Writer) (agent.FileDone, error) {
	call := &agentCall{stdout: out, stderr: io.Discard, file: make(chan agent.FileDone, 1)}
	req.ID = c.register(call)
	defer c.take(req.ID)
	if err := c.send(ctx, agent.KindFile, req); err != nil {
		c.fail(err)
	}
	select {
	case x := <-call.file:
		return x, nil
	case <-c.dead:
		return agent.FileDone{}, fmt.Errorf("%w (%v) during %s of %s", ErrDied, c.deadErr, req.Op, req.Path)
	case <-ctx.Done():
		return agent.FileDone{}, ctx.Err()
	}
}

// killGrace bounds the wait for the agent's answer to a kill.
const killGrace = 15 * time.Second

// exitStatus turns the agent's exit frame into Backend.Exec's answer: a
// command that could not start is an error, as the engine reports it,
// except a missing program, which a shell reports as exit 127.
func exitStatus(x agent.Exit) (backend.ExecStatus, error) {
	if x.Error != "" && x.Code != 127 {
		return backend.ExecStatus{ExitCode: x.Code}, fmt.Errorf("start command: %s", clipString(x.Error, 512))
	}
	return backend.ExecStatus{ExitCode: x.Code, InSandbox: time.Duration(max(x.US, 0)) * time.Microsecond}, nil
}

func clipString(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Kill stops the agent (and, as it ends, every command it started).
func (c *Conn) Kill(ctx context.Context) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	_ = c.proc.Kill(kctx)
	c.proc.Close()
}

// Close ends the agent by closing its stdin: it kills what it started and
// exits; the sandbox's removal takes care of anything else.
func (c *Conn) Close() { c.proc.Close() }

// KillAll has the agent kill every process in the sandbox (which is being
// stopped); it does not wait for that, and only until ctx ends for an
// agent that does not read its input.
func (c *Conn) KillAll(ctx context.Context) {
	_ = c.write(ctx, runner.AppendFrame(nil, c.nonce, agent.KindKillAll, nil))
}

// Window is the credit the server gives each stream: the window the
// agent's ready frame announced, in bounds.
func (c *Conn) Window() int {
	c.mux.mu.Lock()
	defer c.mux.mu.Unlock()
	return c.mux.window
}

// headBuffer keeps the first n bytes written to it (the agent's own
// stderr, written by the backend's goroutine, read for error messages).
type headBuffer struct {
	mu sync.Mutex
	b  []byte
	n  int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.n - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *headBuffer) bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return bytes.Clone(h.b)
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
