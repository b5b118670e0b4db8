package agentconn

import (
	"fmt"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
)

// FileErrClass is the engine's error class of an agent's file error.
type FileErrClass int

// The classes a FileError is in.
const (
	ClassNone    FileErrClass = iota // the engine or the agent failed
	ClassInvalid                     // the request cannot work as asked
	ClassPolicy                      // the sandbox's rules or room refuse it
)

// FileError is an agent's file error, worded for the model.
type FileError struct {
	Class FileErrClass
	Msg   string
}

func (e *FileError) Error() string { return e.Msg }

// FileErrRequest is an agent's answer to a file request that failed.
type FileErrRequest struct {
	Op, Path    string // the operation and the path asked for
	Done        agent.FileDone
	WorkspaceMB int   // the sandbox's limits.workspace_mb, for "full"
	MaxWrite    int64 // the largest file write_file makes
}

// FileErr words the agent's error class for req (the agent's message is
// hostile: clipped, and named as a path only when it is one).
func FileErr(req FileErrRequest) *FileError {
	d, p := req.Done, req.Path
	if d.Path != "" {
		p = d.Path
	}
	msg := clipString(d.Msg, 512)
	where := p
	if msg != "" && d.Err != "io" && d.Err != "linkout" && InAreas(msg) {
		where = msg
	}
	inv := func(format string, a ...any) *FileError { return &FileError{ClassInvalid, fmt.Sprintf(format, a...)} }
	pol := func(format string, a ...any) *FileError { return &FileError{ClassPolicy, fmt.Sprintf(format, a...)} }
	switch d.Err {
	case "notexist":
		return inv("%s does not exist", where)
	case "isdir":
		if req.Op == "read" {
			return inv("%s is a directory; list it with list_files", where)
		}
		return inv("%s is a directory", where)
	case "notreg":
		return inv("%s is not a regular file", where)
	case "notdir":
		return inv("%s: %s is not a directory", p, where)
	case "perm":
		return pol("permission denied for %s", where)
	case "nospace":
		if p == "/tmp" || strings.HasPrefix(p, "/tmp/") {
			return pol("/tmp in the sandbox is full")
		}
		return pol("the sandbox's workspace is full (limits.workspace_mb = %d)", req.WorkspaceMB)
	case "linkout":
		link, target, ok := strings.Cut(msg, "\x00")
		if !ok {
			return pol("%s became a symlink; the file tools do not follow it", where)
		}
		return pol("%q is a symlink to %q, outside /workspace and /tmp; the file tools do not follow it", link, target)
	case "loop":
		return inv("%s: too many levels of symbolic links", p)
	case "toobig":
		return inv("the file would grow past %d bytes; use copy_in for large files", req.MaxWrite)
	case "bad":
		return inv("the sandbox's agent refused the path %s", p)
	}
	return &FileError{ClassNone, fmt.Sprintf("%s %s in the sandbox: %q", req.Op, p, msg)}
}
