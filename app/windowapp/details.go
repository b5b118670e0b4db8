//go:build cgo

package windowapp

import (
	"context"

	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// detailsActions feed a sandbox's details view: its transcript from the
// file its server writes in the state directory, its files and Save to
// through the engine (sandbox.OpenPeer: copy_out's paths and fence, this
// installation's sandboxes only).
func (a *App) detailsActions() ui.DetailsActions {
	return ui.DetailsActions{
		Transcript: func(_ context.Context, id string) (string, error) { return a.st.ReadTranscript(id) },
		Files: func(ctx context.Context, id string) ([]backend.FileEntry, bool, error) {
			p, err := a.peer(ctx, id)
			if err != nil {
				return nil, false, err
			}
			res, err := p.ListFiles(ctx, sandbox.ListFilesRequest{Path: backend.Workspace, Recursive: true})
			return res.Entries, res.Truncated, err
		},
		Save: func(ctx context.Context, id, src, dest string, overwrite bool) (sandbox.CopyOutResult, error) {
			p, err := a.peer(ctx, id)
			if err != nil {
				return sandbox.CopyOutResult{}, err
			}
			res, err := p.CopyOut(ctx, sandbox.CopyOutRequest{Path: src, HostPath: dest, Overwrite: overwrite})
			if err != nil {
				a.log.Warn("save from sandbox refused or failed", "id", id, "src", src, "dest", dest, "overwrite", overwrite, "err", err)
			} else {
				a.log.Info("saved from sandbox", "id", id, "src", src, "dest", res.HostPath, "files", res.Files, "bytes", res.Bytes, "overwrite", overwrite)
			}
			return res, err
		},
		SaveDir: func() string { return a.cfg.Current().Files.WriteRoot },
	}
}

// peer reaches sandbox id of this installation on the engine the window
// follows, under the configuration every server reads.
func (a *App) peer(ctx context.Context, id string) (*sandbox.Peer, error) {
	conn, err := a.backend()
	if err != nil {
		return nil, err
	}
	return sandbox.OpenPeer(ctx, conn.Backend, a.st, a.cfg.Current(), a.log, id)
}
