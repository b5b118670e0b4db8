package docker

import (
	"fmt"
	"slices"

	"github.com/docker/docker/api/types/container"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// createConfig is what a container is made from.
type createConfig struct {
	Config *container.Config
	Host   *container.HostConfig
}

// Option hardens or shapes a container's configuration. Options are applied
// in order; each does one thing, so each can be tested alone.
type Option func(*createConfig, backend.ContainerSpec)

// Hardening item names, as a policy may relax them (backend.ContainerSpec.Relax).
const (
	ItemReadOnlyRoot    = "read_only_root"
	ItemNoNewPrivileges = "no_new_privileges"
	ItemCapDrop         = "cap_drop"
	ItemNonRoot         = "non_root"
	ItemInit            = "init"
)

func relaxed(spec backend.ContainerSpec, item string) bool { return slices.Contains(spec.Relax, item) }

// WithNoNetwork gives the container no network interface but loopback,
// unless the engine's policy granted egress.
func WithNoNetwork(c *createConfig, spec backend.ContainerSpec) {
	if spec.Network == "egress" {
		c.Host.NetworkMode = "bridge"
		return
	}
	c.Host.NetworkMode = "none"
	c.Config.NetworkDisabled = true
}

// WithCapDropAll drops every Linux capability.
func WithCapDropAll(c *createConfig, spec backend.ContainerSpec) {
	if relaxed(spec, ItemCapDrop) {
		return
	}
	c.Host.CapDrop = []string{"ALL"}
	c.Host.CapAdd = nil
}

// WithNoNewPrivileges stops setuid binaries and file capabilities from
// raising privileges.
func WithNoNewPrivileges(c *createConfig, spec backend.ContainerSpec) {
	if relaxed(spec, ItemNoNewPrivileges) {
		return
	}
	c.Host.SecurityOpt = append(c.Host.SecurityOpt, "no-new-privileges:true")
}

// WithReadOnlyRoot makes the image's filesystem read-only; only the
// workspace and /tmp are writable.
func WithReadOnlyRoot(c *createConfig, spec backend.ContainerSpec) {
	c.Host.ReadonlyRootfs = !relaxed(spec, ItemReadOnlyRoot)
}

// WithUser runs the container's own processes (not only execs) as the
// sandbox user.
func WithUser(c *createConfig, spec backend.ContainerSpec) {
	if relaxed(spec, ItemNonRoot) {
		return
	}
	c.Config.User = spec.User
}

// WithTmp mounts /tmp as a size-capped tmpfs owned by the sandbox user.
func WithTmp(c *createConfig, spec backend.ContainerSpec) {
	uid, gid := splitUser(spec.User)
	mb := spec.TmpMB
	if mb <= 0 {
		mb = 64
	}
	if c.Host.Tmpfs == nil {
		c.Host.Tmpfs = map[string]string{}
	}
	c.Host.Tmpfs["/tmp"] = fmt.Sprintf("rw,nosuid,nodev,size=%dm,uid=%s,gid=%s,mode=1777", mb, uid, gid)
}

// WithWorkspace mounts the sandbox's workspace volume (a tmpfs-backed named
// volume, so it is size-capped, lives in memory, and works with the archive
// API even though the root is read-only) at /workspace, made by the
// container create itself (see Volume).
func WithWorkspace(v Volume) Option {
	return func(c *createConfig, _ backend.ContainerSpec) {
		c.Host.Mounts = append(c.Host.Mounts, v.mount())
		c.Config.WorkingDir = backend.Workspace
	}
}

// GVisorThreads is the room for gVisor's own threads added to a sandbox's
// pids limit under runsc (see WithLimits). gVisor's kernel and file proxy
// take about 40 at rest and each exec about 11 more, and on the ptrace
// platform the sandbox's processes run on host threads that gVisor keeps.
// A fork bomb that reaches the limit kills the whole gVisor sandbox (which
// the engine reports); a much larger room lets one bog it down for minutes.
const GVisorThreads = 1024

// WithLimits sets memory (with no swap), CPU quota, pids, nofile and the OOM
// score, so a sandbox cannot take the machine and is the first thing the
// kernel kills when memory runs short.
func WithLimits(c *createConfig, spec backend.ContainerSpec) {
	r := &c.Host.Resources
	r.Memory = spec.MemoryBytes
	r.MemorySwap = spec.MemoryBytes // equal to Memory: no swap
	zero := int64(0)
	r.MemorySwappiness = nil
	if spec.Runtime != "runsc" {
		r.MemorySwappiness = &zero
	}
	r.NanoCPUs = spec.NanoCPUs
	pids := spec.Pids
	if spec.Runtime == "runsc" && pids > 0 {
		// gVisor's own threads (its kernel, its file proxy, one runsc
		// per exec) count against the container's pids cgroup; without
		// room for them an ordinary pipeline makes gVisor fail to start
		// a thread, and it dies (exit 2).
		pids += GVisorThreads
	}
	r.PidsLimit = &pids
	r.Ulimits = []*container.Ulimit{
		{Name: "nofile", Soft: 1024, Hard: 4096},
		{Name: "core", Soft: 0, Hard: 0},
	}
	c.Host.OomScoreAdj = 500
	c.Host.ShmSize = 16 << 20
}

// WithInit runs an init process as PID 1, which reaps zombies and forwards
// signals.
func WithInit(c *createConfig, spec backend.ContainerSpec) {
	if relaxed(spec, ItemInit) {
		return
	}
	t := true
	c.Host.Init = &t
}

// WithIsolation keeps the container's IPC, PID and UTS namespaces private
// and its logs out of the engine (the main process prints nothing anyway).
func WithIsolation(c *createConfig, _ backend.ContainerSpec) {
	c.Host.IpcMode = "private"
	c.Host.PidMode = ""
	c.Host.Privileged = false
	c.Host.Binds = nil
	c.Host.Devices = nil
	c.Host.LogConfig = container.LogConfig{Type: "none"}
	c.Host.RestartPolicy = container.RestartPolicy{Name: "no"}
	c.Config.Hostname = "sandbox"
}

// WithRuntime selects the OCI runtime (e.g. gVisor's runsc).
func WithRuntime(c *createConfig, spec backend.ContainerSpec) {
	c.Host.Runtime = spec.Runtime
}

// defaultOptions are applied to every sandbox, in this order.
func defaultOptions(workspace Volume) []Option {
	return []Option{
		WithNoNetwork,
		WithCapDropAll,
		WithNoNewPrivileges,
		WithReadOnlyRoot,
		WithUser,
		WithTmp,
		WithWorkspace(workspace),
		WithLimits,
		WithInit,
		WithIsolation,
		WithRuntime,
	}
}

// splitUser splits "uid:gid" (gid defaults to uid).
func splitUser(u string) (uid, gid string) {
	if u == "" {
		return "1000", "1000"
	}
	for i := 0; i < len(u); i++ {
		if u[i] == ':' {
			return u[:i], u[i+1:]
		}
	}
	return u, u
}
