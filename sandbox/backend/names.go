package backend

import (
	"errors"
	"time"
)

// Error classes a backend's errors wrap, so that the engine and its callers
// branch with errors.Is.
var (
	// ErrDockerUnreachable: the engine did not answer.
	ErrDockerUnreachable = errors.New("docker unreachable")
	// ErrImageNotFound: the image is not present and cannot be pulled.
	ErrImageNotFound = errors.New("image not found")
	// ErrPull: pulling the image failed.
	ErrPull = errors.New("image pull failed")
	// ErrWorkspace: a new sandbox's workspace is not the size-capped tmpfs
	// volume it was created as (the engine ignored the volume's options or
	// reused a volume of that name), so the sandbox was not started.
	ErrWorkspace = errors.New("workspace refused")
)

// Labels every managed container carries (a contract: sandbox/README.md
// §Sandboxes and labels; the tray and `mcp-sandbox ps` find sandboxes by
// them, whichever server made them).
const (
	// LabelManaged marks every container and volume the engine manages;
	// Backend.List returns the containers carrying it.
	LabelManaged = "io.mcp-sandbox.managed"
	// LabelID is the sandbox id.
	LabelID = "io.mcp-sandbox.id"
	// LabelOwner is the server instance that made the sandbox.
	LabelOwner = "io.mcp-sandbox.owner"
	// LabelOwnerPID and LabelOwnerHost say where that server runs (for a
	// person; no reaper judges an owner by them: see sandbox/inventory).
	LabelOwnerPID  = "io.mcp-sandbox.owner-pid"
	LabelOwnerHost = "io.mcp-sandbox.owner-host"
	// LabelHelper marks a short-lived helper container (package installs)
	// with the id of the sandbox it serves; it is not a sandbox itself.
	// Backend.Remove removes the helpers of the sandbox it removes.
	LabelHelper = "io.mcp-sandbox.helper"
	// LabelCreatedAt is on every volume the backend makes (RFC 3339 with
	// nanoseconds): the orphan sweep leaves a volume alone while it is
	// young, and the workspace check knows the volume it finds is the one
	// this create made.
	LabelCreatedAt = "io.mcp-sandbox.created-at"
	// LabelInstallation is the installation id of the state directory of
	// the server that made the object (state.Store.InstallationID): whose
	// sandboxes `ps`, `stop --all`, the tray and max_sandboxes act on, and
	// which reaper may judge the owner (sandbox/inventory).
	LabelInstallation = "io.mcp-sandbox.installation"
	LabelLanguage     = "io.mcp-sandbox.language"
	LabelExpiresAt    = "io.mcp-sandbox.expires-at"
	LabelClient       = "io.mcp-sandbox.client"
	LabelPool         = "io.mcp-sandbox.pool"
	// Not in the contract, but useful to the tray: the policy limits.
	LabelWorkspaceMB = "io.mcp-sandbox.workspace-mb"
	LabelNetwork     = "io.mcp-sandbox.network"
	// Not in the contract either: the container's resource limits, so that
	// `ps` and the tray need no inspect per sandbox. Containers made before
	// these labels existed lack them and are inspected instead.
	LabelMemoryMB = "io.mcp-sandbox.memory-mb"
	LabelCPUs     = "io.mcp-sandbox.cpus"
	LabelPids     = "io.mcp-sandbox.pids"
	// LabelExecTimeout is the sandbox's default exec timeout in seconds
	// (limits.exec_timeout_seconds when it was made).
	LabelExecTimeout = "io.mcp-sandbox.exec-timeout-seconds"
)

// NamePrefix starts every sandbox container's name; pooled ones use
// PoolNamePrefix until claimed.
const (
	NamePrefix     = "mcp-sandbox-"
	PoolNamePrefix = "mcp-sandbox-pool-"
)

// A probe is a helper container that serves no sandbox (the doctor's
// check that an image's interpreter runs): its LabelHelper is HelperProbe.
// Its maker removes it within ProbeLifetime. One older than that was
// abandoned (its maker was killed, or the engine stopped under it), and
// every reaper removes it and its workspace, whichever installation made
// it: nothing else would ever find it.
const (
	HelperProbe   = "probe"
	ProbeLifetime = 10 * time.Minute
)

// AbandonedProbe reports whether an object with labels, made at created,
// is a probe older than ProbeLifetime at now.
func AbandonedProbe(labels map[string]string, created, now time.Time) bool {
	return labels[LabelManaged] == "true" && labels[LabelHelper] == HelperProbe &&
		!created.IsZero() && now.Sub(created) > ProbeLifetime
}

// ContainerName returns the name of the container of sandbox id.
func ContainerName(id string) string { return NamePrefix + id }

// Workspace is where a sandbox's files live (the workspace volume's mount
// point, and the working directory of its processes).
const Workspace = "/workspace"

// InstallCacheMount is where a sandbox holds its install cache, out of its
// own reach (see ContainerSpec.CacheUser).
const InstallCacheMount = "/var/cache/mcp-sandbox-install"
