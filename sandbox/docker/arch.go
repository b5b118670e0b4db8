package docker

import (
	"context"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var _ backend.ArchReporter = (*Backend)(nil)

// EngineArch returns the architecture of the engine's machine (x86_64,
// aarch64, amd64, …), asked once. Docker says it in /info. Podman says it
// in /version too, which the backend asks anyway: each of its answers
// takes seconds under load.
func (b *Backend) EngineArch(ctx context.Context) (string, error) {
	f, err := b.facts(ctx)
	if err != nil {
		return "", err
	}
	if f.podman && f.arch != "" {
		return f.arch, nil
	}
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
