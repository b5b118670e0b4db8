package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
)

// ExecRequest is a command to run in a sandbox.
type ExecRequest struct {
	Command        string // run by sh -c
	TimeoutSeconds int    // 0: the policy's default
	Workdir        string // relative to /workspace
	Env            map[string]string
	Stdin          string
	// Background starts the command and returns at once (StartBackground).
	Background bool
}

// ExecResult is how a command ended. A non-zero exit, a timeout or an OOM
// kill is a normal result, not an error.
//
// The MCP tools send the output in the text content only, once: the
// structured result leaves Stdout and Stderr empty, so they are omitted.
type ExecResult struct {
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout,omitempty" jsonschema:"Sent in the text content, not here."`
	Stderr     string `json:"stderr,omitempty" jsonschema:"Sent in the text content, not here."`
	DurationMS int64  `json:"duration_ms"`
	TimedOut   bool   `json:"timed_out"`
	Truncated  bool   `json:"truncated"`
	OOMKilled  bool   `json:"oom_killed"`
	// OutputFile, set when the output returned was cut, is the file in
	// the sandbox that holds the whole of it (outfile.go).
	OutputFile string `json:"output_file,omitempty" jsonschema:"When the output was cut: a file in the sandbox holding all of it."`
}

// OutputFunc receives output while a command runs: stream is "stdout" or
// "stderr". It is called from the backend's goroutine and must not block.
type OutputFunc func(stream string, chunk []byte)

// exitTimedOut is the exit code reported for a command killed on timeout
// (as coreutils' timeout does).
const exitTimedOut = 124

// Exec runs a shell command in a sandbox this engine owns. A Background
// request goes to StartBackground instead.
func (e *Engine) Exec(ctx context.Context, id string, req ExecRequest, out OutputFunc) (ExecResult, error) {
	sb, spec, err := e.execSpec(ctx, id, req, out)
	if err != nil {
		return ExecResult{}, err
	}
	res, err := e.run(ctx, sb, spec)
	sb.transcript.add("exec", "$ "+req.Command, &res, errNote(err))
	return res, err
}

// execSpec checks req and makes the process it asks for in sandbox id.
func (e *Engine) execSpec(ctx context.Context, id string, req ExecRequest, out OutputFunc) (*Sandbox, runSpec, error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return nil, runSpec{}, err
	}
	cmd := req.Command
	if strings.TrimSpace(cmd) == "" {
		return nil, runSpec{}, invalidErr("command is empty; pass a shell command such as \"ls -la\"")
	}
	if len(cmd) > maxCommandBytes {
		return nil, runSpec{}, invalidErr("command is %d bytes, more than %d; write long scripts with write_file or run_code", len(cmd), maxCommandBytes)
	}
	if strings.ContainsRune(cmd, 0) {
		return nil, runSpec{}, invalidErr("command holds a NUL byte")
	}
	if len(req.Stdin) > maxStdinBytes {
		return nil, runSpec{}, invalidErr("stdin is %d bytes, more than %d", len(req.Stdin), maxStdinBytes)
	}
	cfg := e.cfg.Current()
	timeout, err := timeoutFor(cfg, req.TimeoutSeconds)
	if err != nil {
		return nil, runSpec{}, err
	}
	wd, err := ResolvePath(req.Workdir)
	if err != nil {
		return nil, runSpec{}, err
	}
	env, err := checkEnv(req.Env)
	if err != nil {
		return nil, runSpec{}, err
	}
	return sb, runSpec{
		argv: []string{"/bin/sh", "-c", cmd}, env: env, workdir: wd, stdin: req.Stdin,
		timeout: time.Duration(timeout) * time.Second, out: out,
	}, nil
}

func errNote(err error) string {
	if err == nil {
		return ""
	}
	return "error: " + err.Error()
}

// runSpec is one process to run in a sandbox.
type runSpec struct {
	argv    []string
	env     []string
	workdir string
	stdin   string
	timeout time.Duration
	out     OutputFunc
}

// run runs a process in sb with the policy's output cap, a timeout that kills
// the whole process tree, and OOM detection.
func (e *Engine) run(ctx context.Context, sb *Sandbox, rs runSpec) (res ExecResult, err error) {
	e.begin(sb)
	defer e.end(sb)
	limit := e.cfg.Current().Limits.OutputBytes
	file := e.outputFileFor(ctx, sb, limit)
	stdout, stderr := newCaptures(limit, rs.out, file)
	defer func() { res.OutputFile = keptFile(file, res.Truncated) }()
	// The sandbox's agent is started (the first time) before the timeout
	// runs: its start is the server's work, not the command's, and on a
	// slow engine it would leave the command no time at all.
	actx, unbindStart := sb.bound(ctx)
	c := e.agentFor(actx, sb)
	unbindStart()
	tctx, cancel := context.WithTimeout(ctx, rs.timeout)
	defer cancel()
	// The exec also ends when the container stops: under gVisor its
	// output stream may never close then.
	bctx, unbind := sb.bound(tctx)
	defer unbind()
	spec := ExecSpec{Cmd: rs.argv, Env: append(append([]string{}, sb.env...), rs.env...), WorkDir: rs.workdir, User: sb.User, Stdout: stdout, Stderr: stderr}
	if rs.stdin != "" {
		spec.Stdin = strings.NewReader(rs.stdin)
	}
	start := time.Now()
	status, err := e.execWith(bctx, sb, c, spec)
	res = ExecResult{ExitCode: status.ExitCode, DurationMS: time.Since(start).Milliseconds()}
	file.finish()
	if errors.Is(err, agentconn.ErrDied) && ctx.Err() == nil && e.oomKilled(ctx, sb) {
		// Files in /workspace count against the sandbox's memory and
		// cannot be paged out: filling it, the command may leave the
		// agent the largest process, and the OOM killer takes it. The
		// command was killed for memory all the same.
		return e.oomResult(res, stdout, stderr, sb), nil
	}
	// An error or a signal is what a container that stopped leaves.
	suspect := err != nil && ctx.Err() == nil && tctx.Err() == nil || err == nil && status.ExitCode >= 128
	if d := e.stoppedDuring(ctx, sb, suspect); d != nil {
		err := d.result(&res, stdout, stderr)
		return res, err
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// The caller cancelled: the process tree is already killed.
		res.Stdout, res.Stderr, res.Truncated = stdout.String(), stderr.String(), stdout.Truncated() || stderr.Truncated()
		return res, fmt.Errorf("cancelled: %w", ctx.Err())
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		res.TimedOut = true
		res.ExitCode = exitTimedOut
		fmt.Fprintf(stderr, "\n[mcp-sandbox: timed out after %s; the process and everything it started were killed%s]\n", rs.timeout, serverHint(stdout, stderr))
	default:
		return res, e.containerGone(ctx, sb, err)
	}
	if res.ExitCode == 137 && !res.TimedOut && e.oomKilled(ctx, sb) {
		return e.oomResult(res, stdout, stderr, sb), nil
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	res.Truncated = stdout.Truncated() || stderr.Truncated()
	return res, nil
}

// keptFile is the output file a result names: file's path when the output
// returned was cut and the file was written, else "".
func keptFile(file *outputFile, cut bool) string {
	if !cut {
		return ""
	}
	return file.finish()
}

func streamTo(out OutputFunc, name string) func([]byte) {
	if out == nil {
		return nil
	}
	return func(p []byte) { out(name, p) }
}

// begin marks the sandbox busy, so it does not expire mid-command, and
// records it (a reaper of this installation reads the record: Reap).
func (e *Engine) begin(s *Sandbox) {
	s.mu.Lock()
	s.busy++
	s.lastUsed = time.Now()
	s.mu.Unlock()
	e.record(s, true)
}

// end marks a command finished and moves the expiry on.
func (e *Engine) end(s *Sandbox) {
	s.mu.Lock()
	s.busy--
	s.lastUsed = time.Now()
	s.mu.Unlock()
	e.record(s, true)
}
