package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/sbfiles"
)

// agentRunner is the runners key of a sandbox's command agent.
const agentRunner = "agent"

// maxAgentStarts bounds how often a sandbox's agent is started: one that
// keeps dying (killed from inside the sandbox) is given up for exec
// through the engine.
const maxAgentStarts = 3

// Exec paths, as sandbox_list reports them.
const (
	ExecAgent  = "agent"       // a resident agent starts each command
	ExecDocker = "docker exec" // one engine exec per command
)

// agentSlot is what a sandbox keeps for its command agent.
type agentSlot struct {
	start sync.Mutex // held while the agent is being started

	mu     sync.Mutex
	conn   *agentconn.Conn
	starts int
	bad    string // why the agent cannot run here; exec goes through the engine
}

// close stops the agent (the sandbox is being removed).
func (s *agentSlot) close() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// agentSlot returns sb's agent slot, or nil while sb is being removed.
func (sb *Sandbox) agentSlot() *agentSlot {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.removing {
		return nil
	}
	if sb.runners == nil {
		sb.runners = map[string]residentRunner{}
	}
	s, ok := sb.runners[agentRunner].(*agentSlot)
	if !ok {
		s = &agentSlot{}
		sb.runners[agentRunner] = s
	}
	return s
}

// proxyBusyRoom is the streams of agentconn.MaxStreams kept beyond a
// proxy's connections (proxyMaxConns) for its 503 answers: a preview's
// dials leave them free, so the connections over network.max_connections
// reach the proxy and are told 503 rather than reset.
const proxyBusyRoom = 16

// agentStartTimeout bounds an agent's start: the engine's architecture
// (asked once; Podman takes seconds to answer under load), the look-up of
// the image's tools, the copy and the agent's ready (interp.StartTimeout).
const agentStartTimeout = 45 * time.Second

// agentFor returns sb's running agent, starting it if needed, or nil when
// commands must go through the engine (the backend cannot attach, or the
// agent cannot run in sb, or keeps dying). A command's timeout must not
// bound ctx: a start cut short leaves no time for the command either, and
// is tried again by the next one.
func (e *Engine) agentFor(ctx context.Context, sb *Sandbox) *agentconn.Conn {
	at, ok := e.be.(backend.Attacher)
	if !ok {
		return nil
	}
	s := sb.agentSlot()
	if s == nil {
		return nil
	}
	if c := s.running(); c != nil {
		return c
	}
	s.start.Lock()
	defer s.start.Unlock()
	s.mu.Lock()
	c, bad, starts := s.conn, s.bad, s.starts
	s.mu.Unlock()
	if c != nil && !c.Gone() {
		return c
	}
	if bad != "" {
		return nil
	}
	if starts >= maxAgentStarts {
		s.setBad("the agent was started " + strconv.Itoa(starts) + " times and stopped each time")
		e.log.Warn("command agent keeps stopping; using docker exec from now on", "id", sb.ID)
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, agentStartTimeout)
	c, err := e.startAgent(sctx, at, sb)
	cancel()
	s.mu.Lock()
	s.starts++
	s.mu.Unlock()
	switch {
	case errors.Is(err, agentconn.ErrUnusable):
		e.log.Info("command agent unavailable; using docker exec", "id", sb.ID, "why", err)
		s.setBad(err.Error())
		return nil
	case err != nil:
		// The engine or ctx failed: this call goes through the engine,
		// which reports what is wrong; a later one tries again.
		e.log.Debug("start command agent", "id", sb.ID, "err", err)
		return nil
	}
	s.mu.Lock()
	removed := sb.isRemoving()
	if !removed {
		s.conn = c
	}
	s.mu.Unlock()
	if removed {
		c.Close()
		return nil
	}
	if sb.Network == NetworkAllowlist {
		// Every agent start (the first, and after each restart) listens
		// again; without its proxy the sandbox simply has no network.
		pctx, cancel := context.WithTimeout(ctx, proxyStartTimeout)
		err := e.startProxy(pctx, sb, c)
		cancel()
		if err != nil {
			e.log.Warn("allowlist proxy did not start", "id", sb.ID, "err", err)
		}
	}
	return c
}

func (s *agentSlot) running() *agentconn.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && !s.conn.Gone() {
		return s.conn
	}
	return nil
}

func (s *agentSlot) setBad(why string) {
	s.mu.Lock()
	s.bad = why
	s.mu.Unlock()
}

// execPath says how sb runs commands: ExecAgent, ExecDocker (with why), or
// "" before the first command decided it.
func (sb *Sandbox) execPath() (path, why string) {
	sb.mu.Lock()
	s, _ := sb.runners[agentRunner].(*agentSlot)
	sb.mu.Unlock()
	if s == nil {
		return "", ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.bad != "":
		return ExecDocker, s.bad
	case s.conn != nil && !s.conn.Gone():
		return ExecAgent, ""
	}
	return "", ""
}

// startAgent starts an agent in sb (as its user), with the image's cat
// and chmod to copy it in. An error wrapping agentconn.ErrUnusable means
// it cannot run in sb; exec then goes through the engine.
func (e *Engine) startAgent(ctx context.Context, at backend.Attacher, sb *Sandbox) (*agentconn.Conn, error) {
	arch := e.engineArch(ctx)
	if !agent.Has(arch) {
		return nil, fmt.Errorf("%w: no agent for architecture %q", agentconn.ErrUnusable, arch)
	}
	var tools [2]string
	for i, name := range []string{"cat", "chmod"} {
		p, err := e.toolPath(ctx, sb, name)
		if errors.Is(err, errNoTool) {
			return nil, fmt.Errorf("%w: the image has no %s to copy the agent in with", agentconn.ErrUnusable, name)
		}
		if err != nil {
			return nil, err
		}
		tools[i] = p
	}
	return agentconn.Start(ctx, agentHost{e.be, at}, agentconn.StartRequest{
		ContainerID: sb.ContainerID, User: sb.User, Arch: arch,
		Cat: tools[0], Chmod: tools[1], Env: serverEnv, Dir: backend.Workspace, Budget: e.streams,
	})
}

// agentHost is the backend with its Attacher, as agentconn.Start needs it.
type agentHost struct {
	backend.Backend
	at backend.Attacher
}

func (h agentHost) Attach(ctx context.Context, id string, spec backend.ExecSpec) (backend.Process, error) {
	return h.at.Attach(ctx, id, spec)
}

// warmAgent starts sb's agent ahead of its first command.
func (e *Engine) warmAgent(ctx context.Context, sb *Sandbox) {
	e.agentFor(ctx, sb)
}

func (e *Engine) engineArch(ctx context.Context) string {
	if ar, ok := e.be.(backend.ArchReporter); ok {
		if a, err := ar.EngineArch(ctx); err == nil && a != "" {
			return a
		}
	}
	return runtime.GOARCH
}

// killAll has the agent, if it runs, kill every process in the sandbox
// (the sandbox is being stopped); it does not wait for that, and only
// briefly for an agent that does not read its input (the container's
// removal ends it then).
func (s *agentSlot) killAll() {
	if c := s.running(); c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c.KillAll(ctx)
	}
}

// execIn runs spec in sb with Backend.Exec's contract, through sb's agent
// where it runs (its stdin, if any, up to agent.MaxStdin), else through the
// engine. spec.User is the sandbox's, as the agent's is.
func (e *Engine) execIn(ctx context.Context, sb *Sandbox, spec backend.ExecSpec) (backend.ExecStatus, error) {
	return e.execWith(ctx, sb, e.agentFor(ctx, sb), spec)
}

// execWith is execIn with the agent already looked for (c, nil for the
// engine's exec).
func (e *Engine) execWith(ctx context.Context, sb *Sandbox, c *agentconn.Conn, spec backend.ExecSpec) (backend.ExecStatus, error) {
	if c == nil {
		return e.be.Exec(ctx, sb.ContainerID, spec)
	}
	var stdin *[]byte
	if spec.Stdin != nil {
		b, err := io.ReadAll(io.LimitReader(spec.Stdin, agent.MaxStdin+1))
		if err != nil {
			return backend.ExecStatus{}, fmt.Errorf("read stdin: %w", err)
		}
		if len(b) > agent.MaxStdin {
			spec.Stdin = io.MultiReader(bytes.NewReader(b), spec.Stdin)
			return e.be.Exec(ctx, sb.ContainerID, spec)
		}
		stdin = &b
	}
	var stopped <-chan struct{}
	if alive := sb.life(); alive != nil {
		stopped = alive.Done()
	}
	return c.Exec(ctx, agentconn.ExecRequest{Spec: spec, Stdin: stdin, Stopped: stopped})
}

// The file tools through a sandbox's agent: one round trip per call, the
// work done by the agent as the sandbox user (package agent's File). What
// the agent answers is hostile: sizes are bounded, paths checked, entries
// validated (package agentconn), and an answer that breaks the rules is an
// error, never data.

// agentFile sends req to c; the agent's answer is waited for as long as a
// command may run (the tar's bound).
func (e *Engine) agentFile(ctx context.Context, c *agentconn.Conn, req agentconn.FileRequest) (agentconn.FileResult, error) {
	req.Timeout = e.tarTimeout()
	return c.File(ctx, req)
}

// agentFileErr words the agent's error class for op on p (the path asked
// for, when the agent names none).
func agentFileErr(sb *Sandbox, op, p string, d agent.FileDone) error {
	if d.Path != "" {
		p = d.Path
	}
	msg := clipString(d.Msg, 512)
	where := p
	if msg != "" && d.Err != "io" && d.Err != "linkout" && agentconn.InAreas(msg) {
		where = msg
	}
	switch d.Err {
	case "notexist":
		return invalidErr("%s does not exist", where)
	case "isdir":
		if op == "read" {
			return invalidErr("%s is a directory; list it with list_files", where)
		}
		return invalidErr("%s is a directory", where)
	case "notreg":
		return invalidErr("%s is not a regular file", where)
	case "notdir":
		return invalidErr("%s: %s is not a directory", p, where)
	case "perm":
		return fmt.Errorf("%w: permission denied for %s", ErrPolicy, where)
	case "nospace":
		if sbfiles.InTmp(p) {
			return fmt.Errorf("%w: /tmp in the sandbox is full", ErrPolicy)
		}
		return fmt.Errorf("%w: the sandbox's workspace is full (limits.workspace_mb = %d)", ErrPolicy, sb.Limits.WorkspaceMB)
	case "linkout":
		link, target, ok := strings.Cut(msg, "\x00")
		if !ok {
			return fmt.Errorf("%w: %s became a symlink; the file tools do not follow it", ErrPolicy, where)
		}
		return fmt.Errorf("%w: %q is a symlink to %q, outside /workspace and /tmp; the file tools do not follow it", ErrPolicy, link, target)
	case "loop":
		return invalidErr("%s: too many levels of symbolic links", p)
	case "toobig":
		return invalidErr("the file would grow past %d bytes; use copy_in for large files", maxWriteBytes)
	case "bad":
		return invalidErr("the sandbox's agent refused the path %s", p)
	}
	return fmt.Errorf("%s %s in the sandbox: %q", op, p, msg)
}

// writeFileAgent is WriteFile through c.
func (e *Engine) writeFileAgent(ctx context.Context, c *agentconn.Conn, sb *Sandbox, clean string, content []byte, appendTo bool) (FileResult, error) {
	r, err := e.agentFile(ctx, c, agentconn.FileRequest{File: agent.File{Op: agent.OpWrite, Path: clean, Data: content, Append: appendTo, Max: maxWriteBytes}})
	if err != nil {
		return FileResult{}, err
	}
	d := r.Done
	if d.Err != "" {
		return FileResult{}, agentFileErr(sb, "write", clean, d)
	}
	sb.transcript.add("write_file", fmt.Sprintf("%s (%d bytes, append=%v)", d.Path, d.N, appendTo), nil, "")
	return FileResult{Path: d.Path, Bytes: d.N}, nil
}

// readFileAgent is ReadFile through c.
func (e *Engine) readFileAgent(ctx context.Context, c *agentconn.Conn, sb *Sandbox, clean string, offset, maxBytes int64) (ReadResult, error) {
	r, err := e.agentFile(ctx, c, agentconn.FileRequest{File: agent.File{Op: agent.OpRead, Path: clean, Offset: offset, Max: maxBytes}})
	if err != nil {
		return ReadResult{}, err
	}
	d := r.Done
	res := ReadResult{Path: d.Path, Size: d.Size, Offset: offset}
	if d.Err == "offset" {
		return res, invalidErr("offset %d is past the end of %s (%d bytes)", offset, d.Path, d.Size)
	}
	if d.Err != "" {
		return ReadResult{}, agentFileErr(sb, "read", clean, d)
	}
	res.Data = r.Data
	res.Truncated = offset+int64(len(res.Data)) < d.Size
	return res, nil
}

// listFilesAgent is ListFiles through c.
func (e *Engine) listFilesAgent(ctx context.Context, c *agentconn.Conn, sb *Sandbox, clean string, recursive bool) ([]FileEntry, bool, error) {
	r, err := e.agentFile(ctx, c, agentconn.FileRequest{
		File:     agent.File{Op: agent.OpList, Path: clean, Recursive: recursive, Limit: maxListEntries},
		MaxNames: maxListNameBytes,
	})
	if err != nil {
		return nil, false, err
	}
	if r.Done.Err != "" {
		return nil, false, agentFileErr(sb, "list", clean, r.Done)
	}
	entries := make([]FileEntry, len(r.Entries))
	for i, fe := range r.Entries {
		entries[i] = FileEntry(fe)
	}
	return entries, r.Truncated, nil
}

// clipString is s cut to at most n bytes.
func clipString(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
