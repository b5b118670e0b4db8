package backendrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Command is the server's hidden subcommand that serves a backend on its
// stdin and stdout.
const Command = "backend-serve"

// request is one call, one JSON line on the child's stdin. Calls are
// answered in any order, by ID.
type request struct {
	ID     uint64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// response answers the request of the same ID.
type response struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Is names the error a caller may test for (errors.Is): one of kinds.
	Is string `json:"is,omitempty"`
}

// The methods. cancel asks the child to give up on a call (its ID), whose
// context ended in the parent.
const (
	mOpen, mCancel             = "open", "cancel"
	mList, mInspect, mUsage    = "list", "inspect", "usage"
	mRemove, mEnsureImage      = "remove", "ensure_image"
	mStatPath, mExec, mCopyOut = "stat_path", "exec", "copy_from"
)

// Place is where the opened backend's sandboxes are.
type Place struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
}

// target names a container, and a path in it or an image.
type target struct {
	ID     string `json:"id,omitempty"`
	Path   string `json:"path,omitempty"`
	Image  string `json:"image,omitempty"`
	Policy string `json:"policy,omitempty"`
}

// execCall is an exec with its stdin read and its output kept whole.
type execCall struct {
	ID      string   `json:"id"`
	Cmd     []string `json:"cmd"`
	Env     []string `json:"env,omitempty"`
	WorkDir string   `json:"workdir,omitempty"`
	User    string   `json:"user,omitempty"`
	Stdin   []byte   `json:"stdin,omitempty"`
	HasIn   bool     `json:"has_stdin,omitempty"`
}

type execResult struct {
	Status backend.ExecStatus `json:"status"`
	Stdout []byte             `json:"stdout,omitempty"`
	Stderr []byte             `json:"stderr,omitempty"`
}

// maxBytes bounds what one call carries (an exec's stdin or output, a
// copied tar): the window's details list files and save them, well
// below it.
const maxBytes = 64 << 20

// kinds are the errors that keep their identity across the pipe.
var kinds = map[string]error{
	"not_exist":         fs.ErrNotExist,
	"image_not_found":   backend.ErrImageNotFound,
	"pull":              backend.ErrPull,
	"workspace":         backend.ErrWorkspace,
	"unreachable":       backend.ErrDockerUnreachable,
	"deadline_exceeded": context.DeadlineExceeded,
	"canceled":          context.Canceled,
}

// kindOf names err's kind, "" when none.
func kindOf(err error) string {
	for k, e := range kinds {
		if errors.Is(err, e) {
			return k
		}
	}
	return ""
}

// remoteError is an error the child answered: its text, and its kind.
type remoteError struct {
	msg string
	is  error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.is }
