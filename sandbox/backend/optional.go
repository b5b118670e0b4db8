package backend

import (
	"context"
	"errors"
	"io"
	"time"
)

// Attacher is implemented by backends that can keep a process running with
// its standard streams attached; the engine uses it for resident
// interpreters. A backend without it still runs code, one exec per call.
type Attacher interface {
	// Attach starts spec.Cmd in a running container and returns at once.
	// ctx bounds the set-up only. spec.Stdout and spec.Stderr receive the
	// output from one goroutine until the process ends; spec.Stdin is
	// ignored (write to the Process).
	Attach(ctx context.Context, containerID string, spec ExecSpec) (Process, error)
}

// Process is a process started by an Attacher. Writing to it writes to its
// stdin.
type Process interface {
	io.Writer
	// Done is closed when the process's output has ended (it exited, or
	// Close cut the connection), after the last byte was delivered.
	Done() <-chan struct{}
	// PID is the process's id inside the container (0 if unknown).
	PID(ctx context.Context) int
	// Wait waits for the process to end and returns how it ended.
	Wait(ctx context.Context) (ExecStatus, error)
	// Kill kills the process and everything it started.
	Kill(ctx context.Context) error
	// Close cuts the connection (the process sees EOF on stdin).
	Close() error
}

// RuntimeChecker is implemented by backends that can say which OCI
// runtimes the engine has registered. The engine asks it once, for
// docker.runtime = "auto" (runsc when registered); without it "auto" is the
// engine's default runtime.
type RuntimeChecker interface {
	// RuntimeRegistered reports whether the engine knows the runtime name.
	RuntimeRegistered(ctx context.Context, name string) (bool, error)
}

// Inspector is implemented by backends that can describe one container by
// id. Listers use it for the limits of containers that lack the limit
// labels (made by older servers); without it those show no limits.
type Inspector interface {
	// Inspect describes a container, managed or not, with the limits it was
	// created with; a missing container is an error.
	Inspect(ctx context.Context, containerID string) (ContainerInfo, error)
}

// ArchReporter is implemented by backends that can say the architecture of
// the engine's machine (amd64, arm64, x86_64, aarch64), which decides the
// agent binary the engine copies into sandboxes. Without it the server's
// own architecture is assumed; a wrong guess only costs the agent (exec
// goes through the engine then).
type ArchReporter interface {
	EngineArch(ctx context.Context) (string, error)
}

// Expirer is implemented by backends whose platform ends a sandbox by
// itself at the expiry it was created with (the expires-at label), even
// when no server is alive: Kubernetes, through an agent-sandbox Sandbox's
// shutdownTime. A sandbox's own expiry is idle time, so the engine moves
// the platform's forward while the sandbox is used or busy: the platform
// never ends a sandbox its server still keeps.
type Expirer interface {
	// Expire sets when the platform ends the sandbox. A backend that
	// cannot move it for this sandbox returns an error wrapping
	// ErrFixedExpiry (the engine then stops asking).
	Expire(ctx context.Context, containerID string, at time.Time) error
}

// ErrFixedExpiry: the platform's expiry of a sandbox cannot be moved.
var ErrFixedExpiry = errors.New("the platform's expiry of this sandbox cannot move")

// AgentOnCreate is implemented by backends on which a command agent is
// slow to start (Kubernetes: it is copied in and attached through the
// cluster's API server, a second or more under gVisor): the engine starts
// a new sandbox's agent before Create returns it, so the sandbox takes
// commands when created and its first one pays no start-up. Elsewhere the
// agent starts in the background while the caller gets the sandbox.
type AgentOnCreate interface{ AgentOnCreate() }

// AgentStager is implemented by backends that copy a sandbox's command
// agent in ahead of its Create (Kubernetes: into a warm pool's ready,
// unclaimed pods, which have run no code), so that the engine's start of
// a claimed sandbox's agent is one attach, not a copy and an attach.
type AgentStager interface {
	// StageAgents gives the backend the engine's copy of the agent: it
	// writes the agent into a container, mode 700, as req.User, and
	// returns the file's path.
	StageAgents(stage func(ctx context.Context, req StageRequest) (file string, err error))
	// StagedAgent returns the file staged in a container this backend's
	// Create returned, and forgets it; "" when there is none. Called
	// before any code ran in the container, so the file is the agent.
	StagedAgent(ctx context.Context, containerID string) string
}

// StageRequest says where AgentStager's stage copies the agent.
type StageRequest struct {
	ContainerID string
	Image       string // the container's image, whose cat and chmod copy it
	User        string // the sandbox user, who owns the file and runs the agent
}
