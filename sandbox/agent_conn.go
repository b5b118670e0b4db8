package sandbox

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
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// errAgentDied is returned for a command whose agent ended (or broke the
// protocol) before the command did: whether it ran, and how far, is
// unknown, so it is reported, never run again.
var errAgentDied = errors.New("the sandbox's command agent stopped")

// agentConn is a running agent (package agent), reached over an attached
// exec. Everything it says is treated as hostile: frames are bounded, output
// for a command goes only to that command's bounded captures, and a frame
// that breaks the protocol ends the connection.
type agentConn struct {
	nonce string
	proc  Process
	diag  *capture // the agent's own stderr, for error messages
	ready chan struct{}

	deadOnce sync.Once
	dead     chan struct{}
	deadErr  error

	wmu sync.Mutex // one frame at a time to the agent

	mu     sync.Mutex
	nextID int
	calls  map[int]*agentCall

	mux streamMux // byte streams into the sandbox (agent_stream.go)
}

// agentCall is a command in progress: where its output and exit go.
type agentCall struct {
	stdout, stderr io.Writer
	exit           chan agent.Exit
	file           chan agent.FileDone // a file request's end
}

// startAgent copies the agent for the engine's architecture into sb's workspace
// (as the sandbox user, with the server's fixed environment) and starts it
// there, attached. An error wrapping errInterpUnusable means it cannot run
// in sb; exec then goes through the engine.
func (e *Engine) startAgent(ctx context.Context, at Attacher, sb *Sandbox) (*agentConn, error) {
	arch := e.engineArch(ctx)
	if !agent.Has(arch) {
		return nil, fmt.Errorf("%w: no agent for architecture %q", errInterpUnusable, arch)
	}
	var tools [2]string
	for i, name := range []string{"cat", "chmod"} {
		p, err := e.toolPath(ctx, sb, name)
		if errors.Is(err, errNoTool) {
			return nil, fmt.Errorf("%w: the image has no %s to copy the agent in with", errInterpUnusable, name)
		}
		if err != nil {
			return nil, err
		}
		tools[i] = p
	}
	c := newAgentConn(runner.NewNonce(), e.streams)
	// /tmp is mounted noexec: the agent goes to the workspace, and removes
	// its file once it runs.
	file := Workspace + "/" + agent.FilePrefix + c.nonce[:12]
	var stderr bytes.Buffer
	bin := agent.Open(arch)
	if bin == nil {
		return nil, fmt.Errorf("%w: the agent for %q does not decompress", errInterpUnusable, arch)
	}
	st, err := e.be.Exec(ctx, sb.ContainerID, ExecSpec{
		Cmd:   []string{"/bin/sh", "-c", `umask 077; set -C; "$1" >"$3" && "$2" 700 "$3"`, "mcp-sandbox-agent-copy", tools[0], tools[1], file},
		Env:   serverEnv,
		User:  sb.User,
		Stdin: bin,
		// Stdout is not read; stderr is bounded.
		Stderr: &limitedBuffer{b: &stderr, n: 4096},
	})
	bin.Close()
	if err != nil {
		return nil, err
	}
	if st.ExitCode != 0 {
		return nil, fmt.Errorf("%w: copying the agent into the workspace failed (exit %d): %s", errInterpUnusable, st.ExitCode, bytes.TrimSpace(stderr.Bytes()))
	}
	dec := c.decoder()
	// No Env: the agent's environment is what the engine gives any exec
	// (the image's), to which each command adds its own.
	proc, err := at.Attach(ctx, sb.ContainerID, ExecSpec{
		Cmd: []string{file}, WorkDir: Workspace, User: sb.User, Stdout: dec, Stderr: c.diag,
	})
	if err != nil {
		return nil, err
	}
	c.proc = proc
	go func() {
		// Owned by c: ends when the agent's output does, or cuts the
		// connection once c is dead (a broken protocol, an agent that
		// stopped reading or answering), so nothing more it sends is read
		// and no write to it stays blocked.
		select {
		case <-proc.Done():
		case <-c.dead:
			proc.Close()
		}
		c.fail(errors.New("the agent exited"))
	}()
	_, _ = proc.Write([]byte(c.nonce + "\n"))
	t := time.NewTimer(interpStartTimeout)
	defer t.Stop()
	select {
	case <-c.ready:
		return c, nil
	case <-c.dead:
		c.kill(ctx)
		return nil, fmt.Errorf("%w: the agent did not start (%v): %s", errInterpUnusable, c.deadErr, c.diagText())
	case <-t.C:
		c.kill(ctx)
		return nil, fmt.Errorf("%w: the agent did not start within %s: %s", errInterpUnusable, interpStartTimeout, c.diagText())
	case <-ctx.Done():
		c.kill(ctx)
		return nil, ctx.Err()
	}
}

// newAgentConn returns a connection, not attached yet, whose streams share
// the server's budget.
func newAgentConn(nonce string, budget *streamBudget) *agentConn {
	return &agentConn{
		nonce: nonce, diag: newCapture(4096, nil), ready: make(chan struct{}),
		dead: make(chan struct{}), calls: map[int]*agentCall{},
		mux: streamMux{streams: map[int]*agentStream{}, listeners: map[int]*agentListener{}, budget: budget},
	}
}

// decoder reads the agent's output into c's frames.
func (c *agentConn) decoder() *runner.Decoder {
	return runner.NewDecoder(c.nonce, c.onFrame, c.fail).Limit(agent.MaxFrame, agent.KindExit, agent.KindFileDone,
		agent.KindDialed, agent.KindData, agent.KindCredit, agent.KindEOF, agent.KindReset,
		agent.KindListening, agent.KindAccept)
}

func (c *agentConn) diagText() string {
	s := bytes.TrimSpace([]byte(c.diag.String()))
	if len(s) == 0 {
		return "no message"
	}
	return string(s)
}

// onFrame receives the agent's frames from the backend's output goroutine.
func (c *agentConn) onFrame(f runner.Frame) {
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

func (c *agentConn) fail(err error) {
	c.deadOnce.Do(func() {
		c.deadErr = err
		close(c.dead)
	})
}

// gone reports whether the agent has ended or broken the protocol.
func (c *agentConn) gone() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

func (c *agentConn) send(ctx context.Context, kind string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.write(ctx, runner.AppendFrame(nil, c.nonce, kind, b))
}

// write writes one frame to the agent. The agent runs as the sandbox user,
// who can stop it (SIGSTOP): a write it does not take in before ctx ends
// ends the connection (a frame written in part cannot be taken back), which
// also unblocks the write, so no call, and no later frame, waits for ever.
func (c *agentConn) write(ctx context.Context, frame []byte) error {
	done := make(chan error, 1)
	go func() {
		// Owned by c: ends when the write does, at the latest once the
		// connection is cut.
		c.wmu.Lock()
		defer c.wmu.Unlock()
		if c.gone() {
			done <- errAgentDied
			return
		}
		_, err := c.proc.Write(frame)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-c.dead:
		return errAgentDied
	case <-ctx.Done():
		c.fail(errors.New("the agent stopped reading its input"))
		return ctx.Err()
	}
}

// exec runs spec through the agent, with Backend.Exec's contract: it
// returns when the command has exited and its output has closed; when ctx
// ends first, the agent kills the command's tree and exec returns
// ctx.Err(). stopped, when it ends, means the container has stopped: no
// grace is given for the agent's answer then.
func (c *agentConn) exec(ctx context.Context, spec ExecSpec, stdin *[]byte, stopped <-chan struct{}) (ExecStatus, error) {
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
		return ExecStatus{ExitCode: -1}, fmt.Errorf("%w (%v) while the command ran; it may have run partly and was not run again", errAgentDied, c.deadErr)
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
	case <-stopped:
	case <-gctx.Done():
		c.fail(errors.New("the agent did not answer a kill"))
	}
	return ExecStatus{ExitCode: -1, Killed: true}, ctx.Err()
}

// register gives call the next request id.
func (c *agentConn) register(call *agentCall) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	c.calls[c.nextID] = call
	return c.nextID
}

// take removes and returns the call waiting on id (nil if none is: it was
// answered, or never asked for).
func (c *agentConn) take(id int) *agentCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.calls[id]
	delete(c.calls, id)
	return call
}

// file has the agent do one file request; the bytes it sends go to out.
// When ctx ends first, file returns ctx.Err() (the agent finishes the
// request, whose answer is then dropped).
func (c *agentConn) file(ctx context.Context, req agent.File, out io.Writer) (agent.FileDone, error) {
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
		return agent.FileDone{}, fmt.Errorf("%w (%v) during %s of %s", errAgentDied, c.deadErr, req.Op, req.Path)
	case <-ctx.Done():
		return agent.FileDone{}, ctx.Err()
	}
}

// killGrace bounds the wait for the agent's answer to a kill.
const killGrace = 15 * time.Second

// exitStatus turns the agent's exit frame into Backend.Exec's answer: a
// command that could not start is an error, as the engine reports it,
// except a missing program, which a shell reports as exit 127.
func exitStatus(x agent.Exit) (ExecStatus, error) {
	if x.Error != "" && x.Code != 127 {
		return ExecStatus{ExitCode: x.Code}, fmt.Errorf("start command: %s", clipString(x.Error, 512))
	}
	return ExecStatus{ExitCode: x.Code}, nil
}

func clipString(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// kill stops the agent (and, as it ends, every command it started).
func (c *agentConn) kill(ctx context.Context) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	_ = c.proc.Kill(kctx)
	c.proc.Close()
}

// close ends the agent by closing its stdin: it kills what it started and
// exits; the sandbox's removal takes care of anything else.
func (c *agentConn) close() { c.proc.Close() }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
