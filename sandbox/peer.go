package sandbox

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Peer is a sandbox some server of this installation made, reached from
// another process (the window, which owns no sandbox) for its files: the
// same paths as list_files and copy_out (ResolvePath, links resolved in
// the sandbox, the sandbox user's tar, copy_out's write fence and
// budgets), without the owning server's bookkeeping: no agent is started
// in it, nothing is added to its transcript and its expiry is not moved.
//
//	p, err := sandbox.OpenPeer(ctx, be, st, cfg, log, id)
//	list, err := p.ListFiles(ctx, sandbox.ListFilesRequest{Recursive: true})
//	res, err := p.CopyOut(ctx, sandbox.CopyOutRequest{Path: "plot.png", HostPath: "/home/me/out/plot.png"})
type Peer struct {
	e  *Engine
	sb *Sandbox
}

// OpenPeer finds sandbox id among be's containers; another installation's
// sandbox is refused with inventory.ErrNotMine, a pool or helper container or an
// unknown id with ErrNotFound. cfg is the configuration whose fence
// applies (the one every server of the installation reads).
func OpenPeer(ctx context.Context, be backend.Backend, st *state.Store, cfg *config.Config, log *slog.Logger, id string) (*Peer, error) {
	inst, err := inventory.Installation(st)
	if err != nil {
		return nil, err
	}
	list, err := be.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if c.Labels[backend.LabelID] != id || c.Labels[backend.LabelHelper] != "" || inventory.UnclaimedPool(c) {
			continue
		}
		if !inventory.Mine(c.Labels, inst) {
			return nil, fmt.Errorf("%w: sandbox %s was made by another MCP Sandbox installation; its files are not reachable from here", inventory.ErrNotMine, id)
		}
		if c.State != "running" {
			return nil, fmt.Errorf("%w: sandbox %s is %s", ErrNotFound, id, printable.Clean(c.State, printable.NameMax))
		}
		user := ""
		if img, err := be.EnsureImage(ctx, c.Image, "never", nil); err == nil {
			user = img.User
		}
		sb := &Sandbox{ID: id, ContainerID: c.ID, User: sandboxUser(user),
			// No agent: commands (the tar) go through the engine's exec.
			runners: map[string]residentRunner{agentRunner: badAgentSlot("reached from another process")},
		}
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		return &Peer{e: &Engine{be: be, cfg: config.Static(cfg), log: log}, sb: sb}, nil
	}
	return nil, fmt.Errorf("%w: no managed sandbox %q", ErrNotFound, printable.Clean(id, printable.NameMax))
}

// ListFiles lists a directory (below /workspace or /tmp) as list_files
// does.
func (p *Peer) ListFiles(ctx context.Context, req ListFilesRequest) (ListFilesResult, error) {
	clean, err := ResolvePath(req.Path)
	if err != nil {
		return ListFilesResult{}, err
	}
	return listByTar(ctx, p.e.box(p.sb), clean, req.Recursive)
}

// CopyOut copies the sandbox file or directory Path to HostPath through
// copy_out's write fence: below files.write_root, never onto write_deny
// (compared by identity), never over an existing file unless Overwrite,
// without exec bits or (unless files.copy_out_links) symlinks.
func (p *Peer) CopyOut(ctx context.Context, req CopyOutRequest) (CopyOutResult, error) {
	clean, err := ResolvePath(req.Path)
	if err != nil {
		return CopyOutResult{}, err
	}
	res, _, err := p.e.copyOut(ctx, p.sb, clean, req.HostPath, req.Overwrite)
	return res, err
}
