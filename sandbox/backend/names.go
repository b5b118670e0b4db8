package backend

import "errors"

// Error classes a backend's errors wrap, so that the engine and its callers
// branch with errors.Is (package sandbox re-exports them).
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

// Labels a backend reads (the full set, a contract with the tray and `ps`,
// is in package sandbox, which re-exports these).
const (
	// LabelManaged marks every container and volume the engine manages;
	// Backend.List returns the containers carrying it.
	LabelManaged = "io.mcp-sandbox.managed"
	// LabelID is the sandbox id.
	LabelID = "io.mcp-sandbox.id"
	// LabelOwner is the server instance that made the sandbox.
	LabelOwner = "io.mcp-sandbox.owner"
	// LabelOwnerPID and LabelOwnerHost say where that server runs (for a
	// person; no reaper judges an owner by them: see sandbox/owners.go).
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
)

// NamePrefix starts every sandbox container's name.
const NamePrefix = "mcp-sandbox-"

// Workspace is where a sandbox's files live (the workspace volume's mount
// point, and the working directory of its processes).
const Workspace = "/workspace"

// InstallCacheMount is where a sandbox holds its install cache, out of its
// own reach (see ContainerSpec.CacheUser).
const InstallCacheMount = "/var/cache/mcp-sandbox-install"
