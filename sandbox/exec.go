package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/output"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/record"
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
	// Output, if set, hears the output while the command runs.
	Output OutputFunc
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
	// the sandbox that holds the whole of it (outputFileFor).
	OutputFile string `json:"output_file,omitempty" jsonschema:"When the output was cut: a file in the sandbox holding all of it."`
	// Timing is where the call's time went, for the server's debug log
	// (the benchmark's breakdown); never sent.
	Timing Timing `json:"-"`
}

// Timing splits a command's or a run's time.
type Timing struct {
	// Sandbox is the round trip from the engine to the sandbox's agent
	// and back: the agent, and the command or the interpreter.
	Sandbox time.Duration
	// Interpreter is the resident interpreter's own part of Sandbox (0
	// for a command, or when the interpreter does not say).
	Interpreter time.Duration
	// Command is a command's part of Sandbox as the agent measured it,
	// from its start to its exit (0 for a run, or when not measured).
	Command time.Duration
}

// OutputFunc receives output while a command runs: stream is "stdout" or
// "stderr". It is called from the backend's goroutine and must not block.
type OutputFunc func(stream string, chunk []byte)

// exitTimedOut is the exit code reported for a command killed on timeout
// (as coreutils' timeout does).
const exitTimedOut = 124

// Exec runs a shell command in a sandbox this engine owns. A Background
// request goes to StartBackground instead.
func (e *Engine) Exec(ctx context.Context, id string, req ExecRequest) (ExecResult, error) {
	sb, spec, err := e.execSpec(ctx, id, req, req.Output)
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
	spec := backend.ExecSpec{Cmd: rs.argv, Env: append(append([]string{}, sb.env...), rs.env...), WorkDir: rs.workdir, User: sb.User, Stdout: stdout, Stderr: stderr}
	if rs.stdin != "" {
		spec.Stdin = strings.NewReader(rs.stdin)
	}
	start := time.Now()
	status, err := e.execWith(bctx, sb, c, spec)
	took := time.Since(start)
	res = ExecResult{ExitCode: status.ExitCode, DurationMS: took.Milliseconds(), Timing: Timing{Sandbox: took, Command: min(status.InSandbox, took)}}
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

// What comes back from a sandbox is bounded in sandbox/output; the engine
// decides which sandboxes keep an output file, and runs its writer.

// newCaptures returns a call's stdout and stderr: together they return at
// most limit bytes, and file (which may be nil) gets all of both.
func newCaptures(limit int, out OutputFunc, file *outputFile) (stdout, stderr *output.Capture) {
	var f *output.File
	if file != nil {
		f = file.f
	}
	return output.NewPair(limit, streamTo(out, "stdout"), streamTo(out, "stderr"), f)
}

// outputFile is one call's output file, nil when none is kept.
type outputFile struct{ f *output.File }

// finish ends the file once the call's process ended and returns its
// path, or "" (output.File.Finish).
func (o *outputFile) finish() string {
	if o == nil {
		return ""
	}
	return o.f.Finish()
}

// outputFileFor returns the file keeping a call's output in sb, or nil
// when sb keeps none (a one-shot sandbox, or limits.output_file_bytes 0).
// limit is limits.output_bytes.
func (e *Engine) outputFileFor(ctx context.Context, sb *Sandbox, limit int) *outputFile {
	lim := e.cfg.Current().Limits
	if lim.OutputFileBytes <= 0 || sb.oneShot.Load() {
		return nil
	}
	return &outputFile{output.NewFile(int64(limit), int64(lim.OutputFileBytes), func() *output.Writer {
		// Numbered as files are made, so that the oldest is n-keep.
		path, old := output.Paths(sb.outputs.Add(1))
		// The writer lives as long as the call (finish ends its input),
		// not its timeout, and ends with the sandbox.
		wctx, stop := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(lim.MaxExecTimeoutSeconds)*time.Second+time.Minute)
		return output.StartWriter(path, stop, func(stdin io.Reader) error {
			return e.runOutputWriter(wctx, sb, path, old, stdin)
		})
	})}
}

// runOutputWriter execs the writer of path in sb as the sandbox user.
func (e *Engine) runOutputWriter(ctx context.Context, sb *Sandbox, path, old string, stdin io.Reader) error {
	bctx, unbind := sb.bound(ctx)
	defer unbind()
	stderr := output.NewCapture(512, nil)
	status, err := e.be.Exec(bctx, sb.ContainerID, backend.ExecSpec{
		Cmd: output.WriterCmd(path, old), WorkDir: "/tmp", User: sb.User, Stdin: stdin, Stderr: stderr,
	})
	if err == nil && status.ExitCode != 0 {
		err = fmt.Errorf("exit code %d: %s", status.ExitCode, stderr.String())
	}
	return err
}

// BackgroundProcess is a command sandbox_exec started in the background;
// Running is looked up when the sandbox is listed.
type BackgroundProcess struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	LogPath string `json:"log_path"`
	Running bool   `json:"running"`
}

// maxProcesses is how many background processes a sandbox remembers (the
// newest); older ones still run, unlisted.
const maxProcesses = 16

// backgroundStart starts $1 (the sandbox's own command, passed as an
// argument, never spliced into the script) with its output in the file
// $2, in a session of its own where setsid exists, and prints the pid of
// the shell that waits for it. The starting shell prints it ($!: setsid
// forks only a process-group leader, which a background child is not),
// so the pid is written before that shell exits: Podman ends an exec's
// output with its first process, not with the last holder of the stream.
// The waiting shell sends its output to the file (a file that cannot be
// made leaves a message on stderr), lives exactly as long as the command
// and, on SIGTERM, passes it to its whole process group: `kill PID` stops
// the command and everything it started, even where sh forks the command
// instead of becoming it.
const backgroundStart = `s=; command -v setsid >/dev/null 2>&1 && s=setsid
$s /bin/sh -c 'exec >"$2" 2>&1 </dev/null
trap "trap - TERM; kill -TERM 0" TERM; /bin/sh -c "$1" & wait $!' mcp-sandbox-bg "$1" "$2" </dev/null >/dev/null 2>"$2.start" &
echo $!; sleep 0.2 2>/dev/null || sleep 1; cat "$2.start" >&2; rm -f "$2.start"`

// backgroundStartTimeout bounds starting a background command (not the
// command itself, which runs until it exits or the sandbox ends).
const backgroundStartTimeout = 30 * time.Second

// StartBackground starts req.Command in sandbox id and returns at once,
// with the process's id and the file in the sandbox that collects its
// output. The process runs under the sandbox's limits until it exits or
// the sandbox ends; no timeout applies to it.
func (e *Engine) StartBackground(ctx context.Context, id string, req ExecRequest) (BackgroundProcess, error) {
	if req.Stdin != "" {
		return BackgroundProcess{}, invalidErr("a background command reads no stdin; write the input to a file and redirect it (cmd < file)")
	}
	sb, spec, err := e.execSpec(ctx, id, req, nil)
	if err != nil {
		return BackgroundProcess{}, err
	}
	logPath := sb.nextLogPath()
	spec.argv = []string{"/bin/sh", "-c", backgroundStart, "mcp-sandbox-bg", req.Command, logPath}
	spec.timeout = backgroundStartTimeout
	res, err := e.run(ctx, sb, spec)
	sb.transcript.add("exec (background)", "$ "+req.Command, &res, errNote(err))
	if err != nil {
		return BackgroundProcess{}, err
	}
	pid, perr := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if res.ExitCode != 0 || perr != nil || pid <= 0 || res.Stderr != "" {
		return BackgroundProcess{}, invalidErr("the background command did not start (exit code %d: %s); run it without background to see why",
			res.ExitCode, record.Clip(strings.TrimSpace(res.Stderr+res.Stdout), 300))
	}
	p := BackgroundProcess{PID: pid, Command: record.Clip(req.Command, 200), LogPath: logPath, Running: true}
	sb.addProcess(p)
	return p, nil
}

// nextLogPath names the log file of sb's next background process.
func (sb *Sandbox) nextLogPath() string {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.bgStarted++
	return fmt.Sprintf("/tmp/bg-%d.log", sb.bgStarted)
}

func (sb *Sandbox) addProcess(p BackgroundProcess) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.procs = append(sb.procs, p)
	if len(sb.procs) > maxProcesses {
		sb.procs = append(sb.procs[:0], sb.procs[len(sb.procs)-maxProcesses:]...)
	}
}

// aliveScript prints those of its arguments that are processes still
// running (not zombies), using only sh builtins and /proc.
const aliveScript = `for p; do s=; while read -r k v _; do [ "$k" = State: ] && { s=$v; break; }; done 2>/dev/null </proc/$p/status
[ -n "$s" ] && [ "$s" != Z ] && echo "$p"; done; exit 0`

// processesTimeout bounds the look-up of which processes still run.
const processesTimeout = 5 * time.Second

// Processes lists sandbox id's background processes, oldest first, each
// with whether it still runs (one short exec in the sandbox; when that
// fails, each is reported as running).
func (e *Engine) Processes(ctx context.Context, id string) []BackgroundProcess {
	e.mu.Lock()
	sb := e.boxes[id]
	e.mu.Unlock()
	if sb == nil {
		return nil
	}
	sb.mu.Lock()
	procs := append([]BackgroundProcess(nil), sb.procs...)
	sb.mu.Unlock()
	if len(procs) == 0 {
		return nil
	}
	argv := []string{"/bin/sh", "-c", aliveScript, "mcp-sandbox-alive"}
	for _, p := range procs {
		argv = append(argv, strconv.Itoa(p.PID))
	}
	cctx, cancel := context.WithTimeout(ctx, processesTimeout)
	defer cancel()
	stdout := output.NewCapture(4096, nil)
	st, err := e.execIn(cctx, sb, backend.ExecSpec{Cmd: argv, User: sb.User, Stdout: stdout, Stderr: output.NewCapture(64, nil)})
	if err != nil || st.ExitCode != 0 {
		return procs
	}
	alive := map[string]bool{}
	for _, f := range strings.Fields(stdout.String()) {
		alive[f] = true
	}
	for i := range procs {
		procs[i].Running = alive[strconv.Itoa(procs[i].PID)]
	}
	return procs
}

// serverOutput matches what servers print once they listen.
var serverOutput = regexp.MustCompile(`(?i)serving http on|listening on|running on http|server (is )?(running|listening|started)|started server on|ready on http|local:\s+http`)

// serverHint is the note a timeout gets when the output looks like a
// server's: such a command never ends by itself.
func serverHint(stdout, stderr *output.Capture) string {
	if serverOutput.MatchString(stdout.String()) || serverOutput.MatchString(stderr.String()) {
		return "; it looks like a server: start it with sandbox_exec background: true, then sandbox_expose its port"
	}
	return ""
}
