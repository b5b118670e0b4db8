package agentconn

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
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// The file tools through a sandbox's agent: one round trip per call, the
// work done by the agent as the sandbox user (package agent's File). What
// the agent answers is hostile: sizes are bounded, paths checked, entries
// validated, and an answer that breaks the rules is an error, never data;
// it ends the connection (a later call starts another agent, or goes
// through the engine after three).

// maxListBytes bounds the listing an agent may send: it stops once it
// has sent 8 MiB, so at most one entry's line (48 KiB) more comes.
const maxListBytes = 8<<20 + 64<<10

// ErrBadAnswer marks an answer from the agent that breaks the protocol.
var ErrBadAnswer = errors.New("the sandbox's agent gave an invalid answer")

// FileRequest is one file request: File's Op, Path and that op's fields
// (its ID is set here).
type FileRequest struct {
	File agent.File
	// Timeout bounds the wait for the answer: the agent runs as the
	// sandbox user, whose code can stop it.
	Timeout time.Duration
	// MaxNames bounds a listing's bytes of names and link targets kept.
	MaxNames int
}

// FileResult is the agent's answer, checked. Done.Err set is the agent's
// error class (notexist, perm, ...), for the engine to word.
type FileResult struct {
	Done      agent.FileDone
	Data      []byte              // a read's bytes
	Entries   []backend.FileEntry // a listing's entries
	Truncated bool                // a listing cut at File.Limit entries or MaxNames
}

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

// File has the agent do req and checks its answer. An answer that breaks
// the protocol (ErrBadAnswer), or none within req.Timeout, ends c.
func (c *Conn) File(ctx context.Context, req FileRequest) (FileResult, error) {
	out := boundedBuffer{}
	switch req.File.Op {
	case agent.OpRead:
		out.n = int(req.File.Max)
	case agent.OpList:
		out.n = maxListBytes
	}
	d, err := c.fileAnswer(ctx, req, &out)
	if err != nil || d.Err != "" {
		return FileResult{Done: d}, err
	}
	res := FileResult{Done: d}
	switch req.File.Op {
	case agent.OpWrite:
		if out.b.Len() != 0 || d.N > req.File.Max || d.N < int64(len(req.File.Data)) {
			err = fmt.Errorf("%w (a write of %d bytes reported as %d)", ErrBadAnswer, len(req.File.Data), d.N)
		}
	case agent.OpRead:
		if int64(out.b.Len()) != d.N {
			err = fmt.Errorf("%w (sent %d bytes, reported %d)", ErrBadAnswer, out.b.Len(), d.N)
		}
		res.Data = out.b.Bytes()
	case agent.OpList:
		res.Entries, res.Truncated, err = listing(&out.b, d, req)
	}
	if err != nil {
		c.endOn(ctx, err)
		return FileResult{}, err
	}
	return res, nil
}

// endOn ends c for a bad answer (nothing more is sent to such an agent).
func (c *Conn) endOn(ctx context.Context, err error) {
	if !c.Gone() {
		c.fail(err)
		c.Kill(ctx)
	}
}

// fileAnswer sends req to c and checks the answer's path (clean and
// inside the areas) and bounds.
func (c *Conn) fileAnswer(ctx context.Context, req FileRequest, out *boundedBuffer) (agent.FileDone, error) {
	fctx, cancel := context.WithTimeout(ctx, req.Timeout)
	defer cancel()
	done, err := c.file(fctx, req.File, out)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			// The agent does not answer: it is ended, and a later call
			// starts another.
			c.fail(fmt.Errorf("no answer to a file request within %s", req.Timeout))
			c.Kill(ctx)
			return done, fmt.Errorf("the sandbox's agent did not answer within %s (limits.exec_timeout_seconds) and was ended: something in the sandbox stopped it, or the file is too large for that time", req.Timeout)
		}
		return done, err
	}
	bad := func(why string) (agent.FileDone, error) {
		err := fmt.Errorf("%w (%s)", ErrBadAnswer, why)
		c.endOn(ctx, err)
		return agent.FileDone{}, err
	}
	if out.over {
		return bad("more data than asked for")
	}
	if done.Path != "" && !InAreas(done.Path) {
		return bad("a path outside the areas")
	}
	if done.Size < 0 || done.N < 0 || len(done.Msg) > 4096 {
		return bad("a negative size or a long message")
	}
	if done.Err == "" && done.Path == "" {
		return bad("no path")
	}
	return done, nil
}

// listing parses and checks the entries of d's listing in b.
func listing(b *bytes.Buffer, d agent.FileDone, req FileRequest) ([]backend.FileEntry, bool, error) {
	recursive := req.File.Recursive
	var entries []backend.FileEntry
	names := 0 // bytes of names and link targets kept
	sc := bufio.NewScanner(b)
	sc.Buffer(make([]byte, 0, 64<<10), maxListBytes)
	for sc.Scan() {
		var le agent.ListEntry
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&le); err != nil {
			return nil, false, fmt.Errorf("%w (a listing entry: %v)", ErrBadAnswer, err)
		}
		fe, err := entryOf(d.Path, le, recursive)
		if err != nil {
			return nil, false, err
		}
		if len(entries) >= req.File.Limit {
			return entries, true, nil
		}
		if names += len(fe.Path) + len(fe.Link); names > req.MaxNames {
			return entries, true, nil
		}
		entries = append(entries, fe)
		if le.P == "" {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("%w (%v)", ErrBadAnswer, err)
	}
	if int64(len(entries)) != d.N {
		return nil, false, fmt.Errorf("%w (sent %d entries, reported %d)", ErrBadAnswer, len(entries), d.N)
	}
	return entries, d.Truncated, nil
}

// entryOf checks one entry of an agent's listing of target.
func entryOf(target string, le agent.ListEntry, recursive bool) (backend.FileEntry, error) {
	bad := func(why string) (backend.FileEntry, error) {
		return backend.FileEntry{}, fmt.Errorf("%w (a listing entry %q: %s)", ErrBadAnswer, clipString(le.P, 256), why)
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
	fe := backend.FileEntry{
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

// InAreas reports whether p is a clean absolute path inside the areas the
// file tools reach (the workspace and /tmp), as an answer's path must be.
func InAreas(p string) bool {
	if len(p) > 4096 || strings.ContainsAny(p, "\x00\n\r") || path.Clean(p) != p {
		return false
	}
	for _, root := range []string{backend.Workspace, "/tmp"} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}
