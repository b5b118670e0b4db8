package docker

import (
	"context"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var _ backend.ArchReporter = (*Backend)(nil)

// EngineArch returns the architecture of the engine's machine (x86_64,
// aarch64, …), asked once.
func (b *Backend) EngineArch(ctx context.Context) (string, error) {
	b.archMu.Lock()
	defer b.archMu.Unlock()
	if b.arch != "" {
		return b.arch, nil
	}
	info, err := b.cli.Info(ctx)
	if err != nil {
		return "", b.wrap("engine info", err)
	}
	b.arch = info.Architecture
	return b.arch, nil
}
