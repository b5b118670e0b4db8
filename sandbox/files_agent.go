package sandbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
)

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
