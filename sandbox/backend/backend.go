package backend

import (
	"context"
	"io"
	"io/fs"
	"time"
)

// Backend is what the engine needs from a container platform: Docker
// (sandbox/docker) and Kubernetes (sandbox/kubernetes) implement it, and
// sandbox/backend/fake for the engine's own tests. What every
// implementation must do is written down as tests in
// sandbox/backend/backendtest.
type Backend interface {
	// Create makes and starts a container (and its workspace) from spec and
	// returns its backend id.
	Create(ctx context.Context, spec ContainerSpec) (string, error)
	// Exec runs a process in a running container. It returns when the
	// process has exited; when ctx is done first, it kills the process and
	// every process it started inside the container, then returns
	// ctx.Err() along with what it captured.
	Exec(ctx context.Context, containerID string, spec ExecSpec) (ExecStatus, error)
	// Remove removes a container, the helpers working for it, and its
	// volumes (workspace, install cache), whatever their state. Removing
	// what is already gone is not an error.
	Remove(ctx context.Context, containerID string) error
	// Rename gives a container a new name (used when a pooled sandbox is
	// claimed).
	Rename(ctx context.Context, containerID, name string) error
	// List returns the managed containers (label io.mcp-sandbox.managed).
	List(ctx context.Context) ([]ContainerInfo, error)
	// Usage samples a container's live resource use.
	Usage(ctx context.Context, containerID string) (Usage, error)
	// EnsureImage makes image present according to the pull policy
	// (never | missing | always), reporting pull progress to progress.
	EnsureImage(ctx context.Context, image, policy string, progress func(PullProgress)) (ImageInfo, error)
	// CopyTo extracts a tar stream into dir inside the container. An
	// entry that would land outside dir (a ".." path, a hard link to a
	// path outside, a write through a symlink) is refused with an error,
	// or made inside the container only; it never reaches the host.
	CopyTo(ctx context.Context, containerID, dir string, tar io.Reader) error
	// CopyFrom returns a tar stream of path inside the container, entries
	// named from its base name down. It passes what it finds through
	// unchanged (symlinks as symlinks, never followed): the stream is
	// hostile, and the engine's reader (sandbox/sbfiles) is the fence.
	CopyFrom(ctx context.Context, containerID, path string) (io.ReadCloser, error)
	// RemoveOrphanVolumes removes the sandbox volumes (workspaces, install
	// caches) that no container uses and for which orphan returns true,
	// and returns their names. A volume a container starts to use
	// meanwhile is kept.
	RemoveOrphanVolumes(ctx context.Context, orphan func(VolumeInfo) bool) ([]string, error)
	// StatPath describes a path in the container's workspace without
	// following a final symlink; a missing path wraps fs.ErrNotExist.
	StatPath(ctx context.Context, containerID, path string) (PathStat, error)
	// RunHelper runs a short-lived helper container (for package installs:
	// the helper gets the network, the sandbox never does) with a fresh,
	// empty workspace of its own, so that it never runs or reads anything
	// the sandbox wrote. When the helper exits 0 and spec.Collect is set,
	// it hands a tar stream of that path in the helper's workspace to
	// spec.Into. It returns when all that is done, and removes the helper
	// and its workspace. containerID names the sandbox it works for.
	RunHelper(ctx context.Context, containerID string, spec HelperSpec) (ExecStatus, error)
	// WaitExit blocks until the container is no longer running and says
	// how it ended; for a container that has stopped or is gone already it
	// returns at once. It returns ctx.Err() when ctx ends first, and other
	// errors when the engine cannot be asked (the caller may try again).
	// The engine runs one per sandbox, so that calls waiting on processes
	// inside end when the container does: under gVisor an out-of-memory
	// kill takes the whole container, and the streams of its processes
	// may never close.
	WaitExit(ctx context.Context, containerID string) (ContainerExit, error)
}

// ContainerExit is how a container stopped.
type ContainerExit struct {
	ExitCode int
	// OOMKilled is set when the kernel's (or gVisor's host cgroup's) OOM
	// killer ended the container.
	OOMKilled bool
	// Removed is set when the container no longer exists, so how it ended
	// is unknown.
	Removed bool
	// Runtime is the container's OCI runtime ("runsc", "runc"), when the
	// engine says.
	Runtime string
}

// VolumeInfo is a sandbox volume as the backend lists it.
type VolumeInfo struct {
	Name   string
	Labels map[string]string
	// Created is when the engine says it made the volume (zero when it
	// does not say); LabelCreatedAt, when present, is more precise.
	Created time.Time
}

// FileEntry is one entry of a sandbox's file listing (list_files, the
// agent's listings, the tar listing), as the tools report it.
type FileEntry struct {
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	IsDir    bool   `json:"is_dir"`
	Mode     string `json:"mode"`
	Modified string `json:"modified"`
	// Link is a symlink's target.
	Link string `json:"link,omitempty"`
}

// PathStat describes a path inside a container.
type PathStat struct {
	Name string
	Size int64
	Mode fs.FileMode
	// LinkTarget is, for a symlink, the absolute path it resolves to.
	LinkTarget string
}

// HelperSpec describes a helper container.
type HelperSpec struct {
	Image   string
	Cmd     []string
	Env     []string
	User    string
	Network string // "none" | "egress"
	// Runtime is the helper's OCI runtime: the sandbox's ("" engine
	// default). A backend never runs a helper under a weaker one than the
	// sandbox's own.
	Runtime     string
	MemoryBytes int64
	NanoCPUs    int64
	Pids        int64
	Labels      map[string]string
	Stdout      io.Writer
	Stderr      io.Writer
	// Started, when set, is called once the helper runs and before Cmd,
	// with the helper's container ID (what Exec and Attach take); an error
	// ends the helper. What it returns is called when Cmd has ended. The
	// engine uses it to serve the helper's proxy through its agent.
	Started func(ctx context.Context, helperID string) (stop func(), err error)
	// WorkspaceMB caps the helper's own workspace.
	WorkspaceMB int
	// CacheDir, when set, is where the helper mounts the sandbox's install
	// cache (see ContainerSpec.CacheUser): package downloads kept across
	// the sandbox's helpers.
	CacheDir string
	// Collect is a path in the helper's workspace handed to Into after
	// a successful run (entries are named from its base name down).
	Collect string
	Into    func(tar io.Reader) error
}

// ContainerSpec is everything the engine decides about a new container. The
// backend turns it into its own form with the hardening that is not a
// choice (HardeningFor).
type ContainerSpec struct {
	Name        string
	Image       string
	Labels      map[string]string
	Env         []string // KEY=VALUE
	User        string   // "uid:gid", never root; empty: 1000:1000
	Network     string   // "none", "allowlist" (no interface either: its connections ride the agent) or "egress"
	MemoryBytes int64
	NanoCPUs    int64
	Pids        int64
	WorkspaceMB int
	TmpMB       int
	Runtime     string // "" engine default, "runc", "runsc"
	// CacheUser, when set ("uid:gid"), has the backend make the sandbox's
	// install cache: a tmpfs volume of WorkspaceMB owned by CacheUser with
	// mode 0700, mounted at InstallCacheMount. The sandbox's own user can
	// neither read nor write it (it has no capabilities); the mount only
	// keeps the cache alive as long as the sandbox, for its helpers, which
	// run as CacheUser.
	CacheUser string
}

// ExecSpec describes one process to run in a container.
type ExecSpec struct {
	Cmd     []string // argv; never a string for a shell to split
	Env     []string
	WorkDir string
	User    string
	Stdin   io.Reader // nil: no stdin
	// Stdout and Stderr receive the output as it arrives; the backend
	// writes to them from one goroutine.
	Stdout io.Writer
	Stderr io.Writer
}

// ExecStatus is how a process ended.
type ExecStatus struct {
	ExitCode int
	// Killed is set when the backend killed the process because ctx ended.
	Killed bool
	// InSandbox is the process's time as the sandbox's agent measured it
	// (0 when nothing in the sandbox measured it): for the engine's timing
	// log only, never a decision.
	InSandbox time.Duration
}

// ContainerInfo is a managed container as the backend lists it.
type ContainerInfo struct {
	ID      string
	Name    string
	Image   string
	State   string // running, exited, created, …
	Created time.Time
	Labels  map[string]string
	// Limits as the container was created with them. Inspector.Inspect
	// fills them in; List may leave them zero (listers read the limit
	// labels instead). Pids may exceed the spec's by room the backend adds
	// for the runtime's own threads (gVisor's).
	MemoryBytes int64
	NanoCPUs    int64
	Pids        int64
	Network     string
	Runtime     string
}

// Usage is a container's live resource use.
type Usage struct {
	MemoryBytes uint64  `json:"memory_bytes"`
	MemoryLimit uint64  `json:"memory_limit_bytes,omitempty"`
	CPUPercent  float64 `json:"cpu_percent"`
	Pids        uint64  `json:"pids"`
	// SampledAt is when the reading was taken; zero if there is none yet.
	SampledAt time.Time `json:"sampled_at,omitzero"`
	// Source says whose reading memory and CPU are: "" the engine's
	// (Docker's stats), UsageMetrics or UsageInPod.
	Source string `json:"source,omitempty"`
}

// Where a Usage's memory and CPU come from, beside the engine's own.
const (
	// UsageMetrics: the cluster's metrics API (metrics.k8s.io), read by
	// the kubelet outside the sandbox.
	UsageMetrics = "metrics"
	// UsageInPod: read inside the sandbox, which controls what it reads.
	UsageInPod = "in-pod"
)

// PullProgress is one step of an image pull.
type PullProgress struct {
	Status  string
	Current int64
	Total   int64
}

// ImageInfo describes a present image.
type ImageInfo struct {
	ID   string
	User string // the image's configured user, if any
	// Pulled is set when EnsureImage had to pull.
	Pulled bool
}
