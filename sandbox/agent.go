package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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

// agentSlot is sb's agent slot among its runners, closed with them.
type agentSlot struct{ *agentconn.Slot }

func (s agentSlot) close() { s.Close() }

// badAgentSlot is a slot whose agent never runs, for why.
func badAgentSlot(why string) agentSlot { return agentSlot{agentconn.BadSlot(why)} }

// agentSlot returns sb's agent slot, or nil while sb is being removed.
func (sb *Sandbox) agentSlot() *agentconn.Slot {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.removing {
		return nil
	}
	if sb.runners == nil {
		sb.runners = map[string]residentRunner{}
	}
	s, ok := sb.runners[agentRunner].(agentSlot)
	if !ok {
		s = agentSlot{&agentconn.Slot{}}
		sb.runners[agentRunner] = s
	}
	return s.Slot
}

// proxyBusyRoom is the streams of agentconn.MaxStreams kept beyond a
// proxy's connections (proxyMaxConns) for its 503 answers: a preview's
// dials leave them free, so the connections over network.max_connections
// reach the proxy and are told 503 rather than reset.
const proxyBusyRoom = 16

// agentFor returns sb's running agent, starting it if needed, or nil when
// commands must go through the engine (the backend cannot attach, or the
// agent cannot run in sb, or keeps dying). A command's timeout must not
// bound ctx: a start cut short leaves no time for the command either, and
// is tried again by the next one.
func (e *Engine) agentFor(ctx context.Context, sb *Sandbox) *agentconn.Conn {
	if _, ok := e.be.(backend.Attacher); !ok {
		return nil
	}
	s := sb.agentSlot()
	if s == nil {
		return nil
	}
	if c := s.Running(); c != nil {
		return c
	}
	c, bad, starts, done := s.Starting()
	defer done()
	if c != nil {
		return c
	}
	if bad != "" {
		return nil
	}
	ended := s.Ended()
	if starts >= maxAgentStarts {
		s.SetBad("the agent was started " + strconv.Itoa(starts) + " times and stopped each time")
		e.log.Warn("command agent keeps stopping; using docker exec from now on", "id", sb.ID, "why", ended)
		return nil
	}
	if ended != nil {
		e.log.Info("command agent ended; starting another", "id", sb.ID, "why", ended)
	}
	c, err := e.startAgent(ctx, sb)
	kept := s.Started(c, func() bool { return !sb.isRemoving() })
	switch {
	case errors.Is(err, agentconn.ErrUnusable):
		e.log.Info("command agent unavailable; using docker exec", "id", sb.ID, "why", err)
		s.SetBad(err.Error())
		return nil
	case err != nil:
		// The engine or ctx failed: this call goes through the engine,
		// which reports what is wrong; a later one tries again.
		e.log.Debug("start command agent", "id", sb.ID, "err", err)
		return nil
	case !kept:
		return nil
	}
	if sb.Network == NetworkAllowlist {
		// Every agent start (the first, and after each restart) listens
		// again; without its proxy the sandbox simply has no network.
		if err := e.startProxy(ctx, sb, c); err != nil {
			e.log.Warn("allowlist proxy did not start", "id", sb.ID, "err", err)
		}
	}
	return c
}

// execPath says how sb runs commands: ExecAgent, ExecDocker (with why), or
// "" before the first command decided it.
func (sb *Sandbox) execPath() (path, why string) {
	sb.mu.Lock()
	s, ok := sb.runners[agentRunner].(agentSlot)
	sb.mu.Unlock()
	if !ok {
		return "", ""
	}
	switch running, bad := s.State(); {
	case bad != "":
		return ExecDocker, bad
	case running:
		return ExecAgent, ""
	}
	return "", ""
}

// startAgent starts an agent in sb (as its user). An error wrapping
// agentconn.ErrUnusable means it cannot run in sb; exec then goes through
// the engine.
func (e *Engine) startAgent(ctx context.Context, sb *Sandbox) (*agentconn.Conn, error) {
	req := agentconn.LaunchRequest{
		ContainerID: sb.ContainerID, User: sb.User, Env: sbfiles.ServerEnv, Dir: backend.Workspace, Budget: e.streams,
		Tool: func(ctx context.Context, name string) (string, error) {
			p, err := e.toolPath(ctx, sb, name)
			if errors.Is(err, sbfiles.ErrNoTool) {
				return "", nil
			}
			return p, err
		},
	}
	if st, ok := e.be.(backend.AgentStager); ok {
		if req.Staged = st.StagedAgent(ctx, sb.ContainerID); req.Staged != "" {
			c, err := agentconn.Launch(ctx, e.be, req)
			if err == nil || ctx.Err() != nil {
				return c, err
			}
			// The staged file did not run: copy the agent in as always.
			e.log.Debug("staged command agent", "id", sb.ID, "err", err)
			req.Staged = ""
		}
	}
	return agentconn.Launch(ctx, e.be, req)
}

// stageAgent copies the agent into a container that has run no code (a
// warm pool's ready pod) for a later startAgent to run: the backend's
// AgentStager calls it.
func (e *Engine) stageAgent(ctx context.Context, req backend.StageRequest) (string, error) {
	return agentconn.Stage(ctx, e.be, agentconn.LaunchRequest{
		ContainerID: req.ContainerID, User: req.User, Env: sbfiles.ServerEnv, Dir: backend.Workspace,
		Tool: func(ctx context.Context, name string) (string, error) {
			key := req.Image + "\x00" + name
			if v, ok := e.imageTools.Load(key); ok {
				return v.(string), nil
			}
			p, err := sbfiles.FindTool(ctx, e.be, req.ContainerID, name)
			if errors.Is(err, sbfiles.ErrNoTool) {
				p, err = "", nil
			}
			if err == nil {
				e.imageTools.Store(key, p)
			}
			return p, err
		},
	})
}

// warmAgent starts sb's agent ahead of its first command.
func (e *Engine) warmAgent(ctx context.Context, sb *Sandbox) {
	e.agentFor(ctx, sb)
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
	engine := func(ctx context.Context, spec backend.ExecSpec) (backend.ExecStatus, error) {
		return e.be.Exec(ctx, sb.ContainerID, spec)
	}
	if c == nil {
		return engine(ctx, spec)
	}
	var stopped <-chan struct{}
	if alive := sb.life(); alive != nil {
		stopped = alive.Done()
	}
	return c.Exec(ctx, agentconn.ExecRequest{Spec: spec, Stopped: stopped, Fallback: engine})
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

// agentFileErr is the agent's error for op on p (the path asked for), in
// the engine's error classes.
func agentFileErr(sb *Sandbox, op, p string, d agent.FileDone) error {
	fe := agentconn.FileErr(agentconn.FileErrRequest{Op: op, Path: p, Done: d, WorkspaceMB: sb.Limits.WorkspaceMB, MaxWrite: maxWriteBytes})
	switch fe.Class {
	case agentconn.ClassInvalid:
		return fmt.Errorf("%w: %s", ErrInvalid, fe.Msg)
	case agentconn.ClassPolicy:
		return fmt.Errorf("%w: %s", ErrPolicy, fe.Msg)
	}
	return fe
}

// writeFileAgent is WriteFile through c.
func (e *Engine) writeFileAgent(ctx context.Context, c *agentconn.Conn, sb *Sandbox, clean string, content []byte, appendTo bool) (WriteFileResult, error) {
	r, err := e.agentFile(ctx, c, agentconn.FileRequest{File: agent.File{Op: agent.OpWrite, Path: clean, Data: content, Append: appendTo, Max: maxWriteBytes}})
	if err != nil {
		return WriteFileResult{}, err
	}
	d := r.Done
	if d.Err != "" {
		return WriteFileResult{}, agentFileErr(sb, "write", clean, d)
	}
	sb.transcript.add("write_file", fmt.Sprintf("%s (%d bytes, append=%v)", d.Path, d.N, appendTo), nil, "")
	return WriteFileResult{Path: d.Path, Bytes: d.N}, nil
}

// readFileAgent is ReadFile through c.
func (e *Engine) readFileAgent(ctx context.Context, c *agentconn.Conn, sb *Sandbox, clean string, offset, maxBytes int64) (ReadFileResult, error) {
	r, err := e.agentFile(ctx, c, agentconn.FileRequest{File: agent.File{Op: agent.OpRead, Path: clean, Offset: offset, Max: maxBytes}})
	if err != nil {
		return ReadFileResult{}, err
	}
	d := r.Done
	res := ReadFileResult{Path: d.Path, Size: d.Size, Offset: offset}
	if d.Err == "offset" {
		return res, invalidErr("offset %d is past the end of %s (%d bytes)", offset, d.Path, d.Size)
	}
	if d.Err != "" {
		return ReadFileResult{}, agentFileErr(sb, "read", clean, d)
	}
	res.Data = r.Data
	res.Truncated = offset+int64(len(res.Data)) < d.Size
	return res, nil
}

// listFilesAgent is ListFiles through c.
func (e *Engine) listFilesAgent(ctx context.Context, c *agentconn.Conn, sb *Sandbox, clean string, recursive bool) ([]backend.FileEntry, bool, error) {
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
	return r.Entries, r.Truncated, nil
}

// toolPath returns the absolute path of the image's name tool (tar, rm),
// found through the engine (not a PATH lookup in the sandbox) once per
// image (the root is the image's, read only) and remembered.
func (e *Engine) toolPath(ctx context.Context, sb *Sandbox, name string) (string, error) {
	sb.mu.Lock()
	p, ok := sb.tools[name]
	sb.mu.Unlock()
	if ok {
		if p == "" {
			return "", sbfiles.ErrNoTool
		}
		return p, nil
	}
	key := sb.Image + "\x00" + name
	var found string
	if v, ok := e.imageTools.Load(key); ok {
		found = v.(string)
	} else {
		var err error
		if found, err = sbfiles.FindTool(ctx, e.be, sb.ContainerID, name); err != nil {
			return "", e.containerGone(ctx, sb, err)
		}
		e.imageTools.Store(key, found)
	}
	sb.mu.Lock()
	if sb.tools == nil {
		sb.tools = map[string]string{}
	}
	sb.tools[name] = found
	sb.mu.Unlock()
	if found == "" {
		return "", sbfiles.ErrNoTool
	}
	return found, nil
}
