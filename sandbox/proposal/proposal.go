package proposal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"
)

// The changes a file can have.
const (
	Modified = "modified"
	Added    = "added"
	Deleted  = "deleted"
)

// The statuses of a Result.
const (
	StatusApplied  = "applied"
	StatusDeclined = "declined"
	StatusPending  = "pending"
	StatusStale    = "stale"
)

// ErrTooBig is wrapped when the sandbox's tree passes Limits.
var ErrTooBig = errors.New("proposal too large")

// ErrArchive is wrapped when the sandbox's tar stream holds what no
// honest tree does: a name that leaves it, a second top.
var ErrArchive = errors.New("unusable archive from the sandbox")

// Proposal is what a person is asked to apply.
type Proposal struct {
	ID        string `json:"id"`
	SandboxID string `json:"sandbox_id,omitempty"`
	Summary   string `json:"summary,omitempty"`
	// HostPath is the resolved host file or directory it changes.
	HostPath string `json:"host_path"`
	// Tree: HostPath is (or becomes) a directory; Files' Rel are below it.
	Tree  bool   `json:"tree"`
	Files []File `json:"files"`
	// Skipped lists what of the sandbox's tree is not proposed (symlinks,
	// special files) and why.
	Skipped   []Skipped `json:"skipped,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// Deadline: no decision by then is a reject.
	Deadline time.Time `json:"deadline"`
	// AppliedBy says who applies on a yes: ByServer (it waits) or
	// ByWindow (the call returned pending).
	AppliedBy string `json:"applied_by,omitempty"`

	content map[string][]byte // new content by Rel (not for Deleted)
}

// File is one changed file.
type File struct {
	HostPath string `json:"host_path"`
	// Rel is the slash path below Proposal.HostPath; "" when it is the file.
	Rel     string `json:"rel,omitempty"`
	Change  string `json:"change"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Diff    string `json:"diff"`
	// HostHash is the sha256 of the host file when the proposal was
	// built; "" when there was none. Apply refuses the proposal (stale)
	// when it no longer matches.
	HostHash string `json:"host_hash,omitempty"`
	// NewHash is the sha256 of the content to write ("" for Deleted).
	NewHash string `json:"new_hash,omitempty"`
	// Mode is the permission the file gets (never an executable bit it
	// did not have).
	Mode uint32 `json:"mode,omitempty"`
}

// Skipped is an entry of the sandbox's tree left out of the proposal.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// maxSkipped bounds Proposal.Skipped.
const maxSkipped = 100

// Result is what propose_changes returns.
type Result struct {
	Status     string       `json:"status"`
	ProposalID string       `json:"proposal_id"`
	Files      []FileResult `json:"files"`
	Backups    []string     `json:"backups,omitempty"`
	// Text is one line for the assistant to tell the person.
	Text string `json:"-"`
}

// FileResult is a File as the tool reports it.
type FileResult struct {
	HostPath string `json:"host_path"`
	Change   string `json:"change"`
	Added    int    `json:"added"`
	Removed  int    `json:"removed"`
}

// Result shapes p's files for a result with status.
func (p *Proposal) Result(status string) Result {
	r := Result{Status: status, ProposalID: p.ID, Files: make([]FileResult, len(p.Files))}
	for i, f := range p.Files {
		r.Files[i] = FileResult{HostPath: f.HostPath, Change: f.Change, Added: f.Added, Removed: f.Removed}
	}
	r.Text = p.line(status)
	return r
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
