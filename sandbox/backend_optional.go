package sandbox

import "context"

// Optional backend capabilities beyond Backend (and Attacher, runner.go),
// which the engine discovers with a type assertion.

// ArchReporter is implemented by backends that can say the architecture of
// the engine's machine (amd64, arm64, x86_64, aarch64), which decides the
// agent binary the engine copies into sandboxes. Without it the server's
// own architecture is assumed; a wrong guess only costs the agent (exec
// goes through the engine then).
type ArchReporter interface {
	EngineArch(ctx context.Context) (string, error)
}
