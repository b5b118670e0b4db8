package sandbox

import "github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"

// Labels every managed container carries (sandbox/README.md §Sandboxes and labels, a contract: the tray
// and `mcp-sandbox ps` find sandboxes by them, whichever server made them).
const (
	LabelManaged   = backend.LabelManaged
	LabelID        = backend.LabelID
	LabelOwner     = backend.LabelOwner
	LabelOwnerPID  = backend.LabelOwnerPID
	LabelOwnerHost = backend.LabelOwnerHost
	// LabelInstallation is the installation id of the state directory of
	// the server that made the object (state.Store.InstallationID): whose
	// sandboxes `ps`, `stop --all`, the tray and max_sandboxes act on, and
	// which reaper may judge the owner (owners.go).
	LabelInstallation = "io.mcp-sandbox.installation"
	LabelLanguage     = "io.mcp-sandbox.language"
	LabelExpiresAt    = "io.mcp-sandbox.expires-at"
	LabelClient       = "io.mcp-sandbox.client"
	LabelPool         = "io.mcp-sandbox.pool"
	// LabelHelper marks a short-lived helper container (package installs)
	// with the id of the sandbox it serves; it is not a sandbox itself.
	LabelHelper = backend.LabelHelper
	// Not in the contract, but useful to the tray: the policy limits.
	LabelWorkspaceMB = "io.mcp-sandbox.workspace-mb"
	LabelNetwork     = "io.mcp-sandbox.network"
	// LabelCreatedAt is on every volume the backend makes (RFC 3339 with
	// nanoseconds): the orphan sweep leaves a volume alone while it is
	// young, and the workspace check knows the volume it finds is the one
	// this create made.
	LabelCreatedAt = backend.LabelCreatedAt
)

// NamePrefix starts every sandbox container's name; pooled ones use
// PoolNamePrefix until claimed.
const (
	NamePrefix     = backend.NamePrefix
	PoolNamePrefix = "mcp-sandbox-pool-"
)

// Workspace is where a sandbox's files live; relative paths resolve here.
const Workspace = backend.Workspace

// ContainerName returns the name of the container of sandbox id.
func ContainerName(id string) string { return NamePrefix + id }

// Not in the contract either: the container's resource limits, so that
// `ps` and the tray need no inspect per sandbox. Containers made before
// these labels existed lack them and are inspected instead.
const (
	LabelMemoryMB = "io.mcp-sandbox.memory-mb"
	LabelCPUs     = "io.mcp-sandbox.cpus"
	LabelPids     = "io.mcp-sandbox.pids"
	// LabelExecTimeout is the sandbox's default exec timeout in seconds
	// (limits.exec_timeout_seconds when it was made).
	LabelExecTimeout = "io.mcp-sandbox.exec-timeout-seconds"
)
