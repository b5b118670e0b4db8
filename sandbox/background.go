package sandbox

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

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
			res.ExitCode, clip(strings.TrimSpace(res.Stderr+res.Stdout), 300))
	}
	p := BackgroundProcess{PID: pid, Command: clip(req.Command, 200), LogPath: logPath, Running: true}
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
	stdout := newCapture(4096, nil)
	st, err := e.execIn(cctx, sb, ExecSpec{Cmd: argv, User: sb.User, Stdout: stdout, Stderr: newCapture(64, nil)})
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
func serverHint(stdout, stderr *capture) string {
	if serverOutput.MatchString(stdout.String()) || serverOutput.MatchString(stderr.String()) {
		return "; it looks like a server: start it with sandbox_exec background: true, then sandbox_expose its port"
	}
	return ""
}
