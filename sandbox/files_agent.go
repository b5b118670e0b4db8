package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
)

// The file tools through a sandbox's agent: one round trip per call, the
// work done by the agent as the sandbox user (package agent's File). What
// the agent answers is hostile: sizes are bounded, paths checked, entries
// validated, and an answer that breaks the rules is an error, never data.

// maxListBytes bounds the listing an agent may send: it stops once it
// has sent 8 MiB, so at most one entry's line (48 KiB) more comes.
const maxListBytes = 8<<20 + 64<<10

// errAgentAnswer marks an answer from the agent that breaks the protocol.
var errAgentAnswer = errors.New("the sandbox's agent gave an invalid answer")

// boundedBuffer keeps up to n bytes and notes whether more came.
type boundedBuffer struct {
	b    bytes.Buffer
	n    int
	over bool
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.n {
		w.over = true
		return len(p), nil
	}
	w.b.Write(p)
	return len(p), nil
}

// agentFile sends req to c and checks the answer's path: it must be clean
// and inside the areas. A protocol failure kills the agent (a later call
// starts another, or goes through the engine).
func (e *Engine) agentFile(ctx context.Context, c *agentConn, sb *Sandbox, req agent.File, out *boundedBuffer) (agent.FileDone, error) {
	// The agent runs as the sandbox user, whose code can stop it: its
	// answer is waited for as long as a command may run (the tar's bound).
	limit := e.tarTimeout()
	fctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	done, err := c.file(fctx, req, out)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			// The agent does not answer: it is ended, and a later call
			// starts another.
			c.fail(fmt.Errorf("no answer to a file request within %s", limit))
			c.kill(ctx)
			return done, fmt.Errorf("the sandbox's agent did not answer within %s (limits.exec_timeout_seconds) and was ended: something in the sandbox stopped it, or the file is too large for that time", limit)
		}
		return done, err
	}
	bad := func(why string) (agent.FileDone, error) {
		c.fail(fmt.Errorf("%w: %s", errAgentAnswer, why))
		c.kill(ctx)
		return agent.FileDone{}, fmt.Errorf("%w (%s)", errAgentAnswer, why)
	}
	if out.over {
		return bad("more data than asked for")
	}
	if done.Path != "" {
		if p, err := ResolvePath(done.Path); err != nil || p != done.Path || !strings.HasPrefix(p, "/") {
			return bad("a path outside the areas")
		}
	}
	if done.Size < 0 || done.N < 0 || len(done.Msg) > 4096 {
		return bad("a negative size or a long message")
	}
	if done.Err == "" && done.Path == "" {
		return bad("no path")
	}
	return done, nil
}

// endOnBadAnswer ends c when err says its answer broke the protocol (the
// contract: nothing more is sent to such an agent; the next call starts a
// fresh one, or goes through the engine after three), and returns err.
func endOnBadAnswer(ctx context.Context, c *agentConn, err error) error {
	if errors.Is(err, errAgentAnswer) && !c.gone() { // agentFile's own checks ended it already
		c.fail(err)
		c.kill(ctx)
	}
	return err
}

// agentFileErr words the agent's error class for op on p (the path asked
// for, when the agent names none).
func agentFileErr(sb *Sandbox, op, p string, d agent.FileDone) error {
	if d.Path != "" {
		p = d.Path
	}
	msg := clipString(d.Msg, 512)
	where := p
	if msg != "" && d.Err != "io" && d.Err != "linkout" {
		if q, err := ResolvePath(msg); err == nil && q == msg {
			where = msg
		}
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
		if inTmp(p) {
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
func (e *Engine) writeFileAgent(ctx context.Context, c *agentConn, sb *Sandbox, clean string, content []byte, appendTo bool) (FileResult, error) {
	var out boundedBuffer
	d, err := e.agentFile(ctx, c, sb, agent.File{Op: agent.OpWrite, Path: clean, Data: content, Append: appendTo, Max: maxWriteBytes}, &out)
	if err != nil {
		return FileResult{}, err
	}
	if d.Err != "" {
		return FileResult{}, agentFileErr(sb, "write", clean, d)
	}
	if out.b.Len() != 0 || d.N > maxWriteBytes || d.N < int64(len(content)) {
		return FileResult{}, fmt.Errorf("%w (a write of %d bytes reported as %d)", errAgentAnswer, len(content), d.N)
	}
	sb.transcript.add("write_file", fmt.Sprintf("%s (%d bytes, append=%v)", d.Path, d.N, appendTo), nil, "")
	return FileResult{Path: d.Path, Bytes: d.N}, nil
}

// readFileAgent is ReadFile through c.
func (e *Engine) readFileAgent(ctx context.Context, c *agentConn, sb *Sandbox, clean string, offset, maxBytes int64) (ReadResult, error) {
	out := boundedBuffer{n: int(maxBytes)}
	d, err := e.agentFile(ctx, c, sb, agent.File{Op: agent.OpRead, Path: clean, Offset: offset, Max: maxBytes}, &out)
	if err != nil {
		return ReadResult{}, err
	}
	res := ReadResult{Path: d.Path, Size: d.Size, Offset: offset}
	if d.Err == "offset" {
		return res, invalidErr("offset %d is past the end of %s (%d bytes)", offset, d.Path, d.Size)
	}
	if d.Err != "" {
		return ReadResult{}, agentFileErr(sb, "read", clean, d)
	}
	if int64(out.b.Len()) != d.N {
		return ReadResult{}, fmt.Errorf("%w (sent %d bytes, reported %d)", errAgentAnswer, out.b.Len(), d.N)
	}
	res.Data = out.b.Bytes()
	res.Truncated = offset+int64(len(res.Data)) < d.Size
	return res, nil
}

// listFilesAgent is ListFiles through c.
func (e *Engine) listFilesAgent(ctx context.Context, c *agentConn, sb *Sandbox, clean string, recursive bool) ([]FileEntry, bool, error) {
	out := boundedBuffer{n: maxListBytes}
	d, err := e.agentFile(ctx, c, sb, agent.File{Op: agent.OpList, Path: clean, Recursive: recursive, Limit: maxListEntries}, &out)
	if err != nil {
		return nil, false, err
	}
	if d.Err != "" {
		return nil, false, agentFileErr(sb, "list", clean, d)
	}
	target := d.Path
	var entries []FileEntry
	names := 0 // bytes of names and link targets kept
	sc := bufio.NewScanner(&out.b)
	sc.Buffer(make([]byte, 0, 64<<10), maxListBytes)
	for sc.Scan() {
		var le agent.ListEntry
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&le); err != nil {
			return nil, false, fmt.Errorf("%w (a listing entry: %v)", errAgentAnswer, err)
		}
		fe, err := entryOfAgent(target, le, recursive)
		if err != nil {
			return nil, false, err
		}
		if len(entries) >= maxListEntries {
			return entries, true, nil
		}
		if names += len(fe.Path) + len(fe.Link); names > maxListNameBytes {
			return entries, true, nil
		}
		entries = append(entries, fe)
		if le.P == "" {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("%w (%v)", errAgentAnswer, err)
	}
	if int64(len(entries)) != d.N {
		return nil, false, fmt.Errorf("%w (sent %d entries, reported %d)", errAgentAnswer, len(entries), d.N)
	}
	return entries, d.Truncated, nil
}

// entryOfAgent checks one entry of an agent's listing of target.
func entryOfAgent(target string, le agent.ListEntry, recursive bool) (FileEntry, error) {
	bad := func(why string) (FileEntry, error) {
		return FileEntry{}, fmt.Errorf("%w (a listing entry %q: %s)", errAgentAnswer, clipString(le.P, 256), why)
	}
	name := target
	if le.P != "" {
		if strings.HasPrefix(le.P, "/") || path.Clean(le.P) != le.P || le.P == ".." || strings.HasPrefix(le.P, "../") || strings.ContainsRune(le.P, 0) {
			return bad("not a path below the directory")
		}
		if !recursive && strings.Contains(le.P, "/") {
			return bad("below a subdirectory")
		}
		name = path.Join(target, le.P)
	}
	if len(le.P) > 64<<10 || len(le.L) > 4096 || le.S < 0 || strings.ContainsRune(le.L, 0) {
		return bad("out of bounds")
	}
	mode := fs.FileMode(le.M)
	fe := FileEntry{
		Path: name, Size: le.S, IsDir: mode.IsDir(), Mode: mode.String(),
		Modified: time.Unix(le.T, 0).UTC().Format(time.RFC3339),
	}
	if mode&fs.ModeSymlink != 0 {
		fe.Link = le.L
	} else if le.L != "" {
		return bad("a link target on what is not a link")
	}
	if fe.IsDir {
		fe.Size = 0
	}
	return fe, nil
}
