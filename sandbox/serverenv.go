package sandbox

import (
	"context"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/sbfiles"
)

// toolPath returns the absolute path of the image's name tool (tar, rm),
// found once per sandbox through the engine (not a PATH lookup in the
// sandbox) and remembered.
func (e *Engine) toolPath(ctx context.Context, sb *Sandbox, name string) (string, error) {
	sb.mu.Lock()
	p, ok := sb.tools[name]
	sb.mu.Unlock()
	if ok {
		if p == "" {
			return "", sbfiles.ErrNoTool
		}
		return p, nil
	}
	found, err := sbfiles.FindTool(ctx, e.be, sb.ContainerID, name)
	if err != nil {
		return "", e.containerGone(ctx, sb, err)
	}
	sb.mu.Lock()
	if sb.tools == nil {
		sb.tools = map[string]string{}
	}
	sb.tools[name] = found
	sb.mu.Unlock()
	if found == "" {
		return "", sbfiles.ErrNoTool
	}
	return found, nil
}
