package proposal

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// DefaultTTL is how long a proposal waits for a decision.
const DefaultTTL = 10 * time.Minute

// maxDiffTotal bounds the diff text of one proposal; later files' diffs
// are left out.
const maxDiffTotal = 1 << 20

// Request is a propose_changes call, with the policy in force.
type Request struct {
	SandboxID string
	// HostPath is the host file or directory as the call names it
	// (absolute or "~/…").
	HostPath string
	Summary  string
	// Delete proposes deleting host files that the sandbox's tree lacks.
	Delete bool
	Fence  hostfs.Fence
	// ApplyRoots is files.apply_roots.
	ApplyRoots []string
	Limits     Limits
	TTL        time.Duration // 0: DefaultTTL
	Now        time.Time     // zero: time.Now()
}

// Build compares the sandbox's tree (archive: the tar stream of
// /workspace/<path>, a file or a directory) with the host's and returns
// the proposal: the changed files only, each with its diff and the hash
// of the host file now. A host_path outside files.apply_roots, or a file
// that either deny list protects, refuses the whole proposal (ErrFence)
// before anyone is asked. Nothing on the host is written.
func Build(ctx context.Context, archive io.Reader, req Request) (*Proposal, error) {
	real, err := req.Fence.ApplyPath(req.HostPath, req.ApplyRoots)
	if err != nil {
		return nil, err
	}
	tree, err := readArchive(ctx, archive, req.Limits.withDefaults())
	if err != nil {
		return nil, err
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	ttl := req.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	p := &Proposal{ID: state.NewAskID(), SandboxID: req.SandboxID, Summary: oneLine(req.Summary), HostPath: real,
		Tree: tree.dir, Skipped: tree.skipped, CreatedAt: now, Deadline: now.Add(ttl), content: map[string][]byte{}}
	h, err := openHost(req.Fence.ApplyGuard(), real, tree.dir, req.Limits.withDefaults().MaxFileBytes)
	if err != nil {
		return nil, err
	}
	defer h.close()
	if err := p.compare(ctx, h, tree, req); err != nil {
		return nil, err
	}
	return p, nil
}

// compare adds the files that differ, in path order.
func (p *Proposal) compare(ctx context.Context, h *hostSide, tree *sandboxTree, req Request) error {
	rels := make([]string, 0, len(tree.files))
	for rel := range tree.files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	diffBytes := 0
	for _, rel := range rels {
		if err := ctx.Err(); err != nil {
			return err
		}
		old, mode, err := h.read(rel)
		if errors.Is(err, errInTheWay) {
			p.skip(rel, err.Error())
			continue
		}
		if err != nil {
			return err
		}
		f := File{HostPath: h.abs(rel), Rel: rel, Change: Modified, NewHash: hashOf(tree.files[rel]), Mode: uint32(safeMode(tree.modes[rel], mode, old != nil))}
		if old == nil {
			f.Change = Added
		} else if f.HostHash = hashOf(old); f.HostHash == f.NewHash {
			continue
		}
		p.addFile(f, old, tree.files[rel], &diffBytes)
	}
	if !req.Delete || !tree.dir {
		return nil
	}
	return h.walk(req.Limits.withDefaults().MaxFiles, func(rel string, old []byte) error {
		if _, ok := tree.files[rel]; ok {
			return nil
		}
		p.addFile(File{HostPath: h.abs(rel), Rel: rel, Change: Deleted, HostHash: hashOf(old)}, old, nil, &diffBytes)
		return nil
	})
}

func (p *Proposal) addFile(f File, old, new []byte, diffBytes *int) {
	d := Diff(old, new)
	f.Added, f.Removed, f.Diff = d.Added, d.Removed, d.Text
	if *diffBytes += len(d.Text); *diffBytes > maxDiffTotal {
		f.Diff = "diff left out: this proposal's diffs pass 1 MiB\n"
	}
	if f.Change != Deleted {
		p.content[f.Rel] = new
	}
	p.Files = append(p.Files, f)
}

func (p *Proposal) skip(rel, reason string) {
	if len(p.Skipped) < maxSkipped {
		p.Skipped = append(p.Skipped, Skipped{Path: rel, Reason: reason})
	}
}

// safeMode is the permission a written file gets: the host file's when it
// replaces one, else 0644: like copy_out, a proposal never sets an
// executable bit the host file did not have.
func safeMode(_, host fs.FileMode, exists bool) fs.FileMode {
	if exists {
		return host.Perm()
	}
	return 0o644
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' || r == '\r' {
			s = s[:i]
			break
		}
	}
	return truncate(s, 300)
}

var errInTheWay = errors.New("on the host a symlink, special file or directory is in the way; a proposal never replaces or follows it")

// inTheWay classes the refusals that concern one file (a symlink or a
// non-directory on its way) so that the file is skipped, not the proposal.
func inTheWay(err error) error {
	if errors.Is(err, hostfs.ErrDenied) || !errors.Is(err, hostfs.ErrFence) && !isNotDir(err) {
		return err
	}
	return errInTheWay
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && (errors.Is(err, fs.ErrInvalid) || pe.Err.Error() == "not a directory")
}

func dirOf(rel string) string {
	if d := path.Dir(rel); d != "." {
		return filepath.FromSlash(d)
	}
	return "."
}
