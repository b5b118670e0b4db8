package docker

import (
	"fmt"

	"github.com/docker/docker/api/types/container"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// createConfig is what a container is made from.
type createConfig struct {
	Config *container.Config
	Host   *container.HostConfig
}

// render sets on c what h describes: the hardening of every container the
// backend makes (backend.HardeningFor is the list; hardening_test.go reads
// it back from c and from a real container).
func render(c *createConfig, h backend.Hardening) {
	renderNetwork(c, h)
	renderPrivileges(c, h)
	renderFiles(c, h)
	renderLimits(c, h)
	renderIsolation(c, h)
}

// renderNetwork gives the container no interface but loopback, unless the
// engine's policy granted egress.
func renderNetwork(c *createConfig, h backend.Hardening) {
	if h.Egress {
		c.Host.NetworkMode = "bridge"
		return
	}
	c.Host.NetworkMode = "none"
	c.Config.NetworkDisabled = true
}

// renderPrivileges drops every capability, stops setuid binaries and file
// capabilities from raising privileges, and runs the container's own
// processes (not only execs) as the sandbox user. Seccomp is the engine's
// default profile: nothing here overrides it.
func renderPrivileges(c *createConfig, h backend.Hardening) {
	if h.DropAllCaps {
		c.Host.CapDrop = []string{"ALL"}
		c.Host.CapAdd = nil
	}
	if h.NoNewPrivileges {
		c.Host.SecurityOpt = append(c.Host.SecurityOpt, "no-new-privileges:true")
	}
	c.Config.User = h.User()
}

// renderFiles makes the image's filesystem read-only and mounts /tmp as a
// size-capped tmpfs owned by the sandbox user (the workspace is a volume:
// mountWorkspace).
func renderFiles(c *createConfig, h backend.Hardening) {
	c.Host.ReadonlyRootfs = h.ReadOnlyRoot
	if c.Host.Tmpfs == nil {
		c.Host.Tmpfs = map[string]string{}
	}
	c.Host.Tmpfs["/tmp"] = fmt.Sprintf("rw,nosuid,nodev,size=%dm,uid=%d,gid=%d,mode=1777", h.TmpMB, h.UID, h.GID)
}

// mountWorkspace mounts the sandbox's workspace volume (a tmpfs-backed named
// volume, so it is size-capped, lives in memory, and works with the archive
// API even though the root is read-only) at /workspace, made by the
// container create itself (see Volume).
func mountWorkspace(c *createConfig, v Volume) {
	c.Host.Mounts = append(c.Host.Mounts, v.mount())
	c.Config.WorkingDir = backend.Workspace
}

// GVisorThreads is the room for gVisor's own threads added to a sandbox's
// pids limit under runsc (see renderLimits). gVisor's kernel and file proxy
// take about 40 at rest and each exec about 11 more, and on the ptrace
// platform the sandbox's processes run on host threads that gVisor keeps.
// A fork bomb that reaches the limit kills the whole gVisor sandbox (which
// the engine reports); a much larger room lets one bog it down for minutes.
const GVisorThreads = 1024

// renderLimits sets memory (with no swap), CPU quota, pids, nofile, core
// and the OOM score, so a sandbox cannot take the machine and is the first
// thing the kernel kills when memory runs short.
func renderLimits(c *createConfig, h backend.Hardening) {
	r := &c.Host.Resources
	r.Memory = h.MemoryBytes
	if h.NoSwap {
		r.MemorySwap = h.MemoryBytes // equal to Memory: no swap
		zero := int64(0)
		r.MemorySwappiness = nil
		if h.Runtime != "runsc" {
			r.MemorySwappiness = &zero
		}
	}
	r.NanoCPUs = h.NanoCPUs
	pids := h.Pids
	if h.Runtime == "runsc" && pids > 0 {
		// gVisor's own threads (its kernel, its file proxy, one runsc
		// per exec) count against the container's pids cgroup; without
		// room for them an ordinary pipeline makes gVisor fail to start
		// a thread, and it dies (exit 2).
		pids += GVisorThreads
	}
	r.PidsLimit = &pids
	r.Ulimits = []*container.Ulimit{{Name: "nofile", Soft: h.NofileSoft, Hard: h.NofileHard}}
	if h.NoCoreDumps {
		r.Ulimits = append(r.Ulimits, &container.Ulimit{Name: "core", Soft: 0, Hard: 0})
	}
	c.Host.OomScoreAdj = h.OOMScoreAdj
	c.Host.ShmSize = 16 << 20
}

// renderIsolation runs an init as PID 1, keeps the container's IPC and PID
// namespaces private and the host's mounts and devices out, never
// restarts it, keeps its logs out of the engine (the main process prints
// nothing anyway) and selects the OCI runtime (e.g. gVisor's runsc).
func renderIsolation(c *createConfig, h backend.Hardening) {
	c.Host.Init = &h.Init
	if h.NoHostAccess {
		c.Host.IpcMode = "private"
		c.Host.PidMode = ""
		c.Host.Privileged = false
		c.Host.Binds = nil
		c.Host.Devices = nil
	}
	if h.NeverRestart {
		c.Host.RestartPolicy = container.RestartPolicy{Name: "no"}
	}
	if h.NoLogs {
		c.Host.LogConfig = container.LogConfig{Type: "none"}
	}
	c.Host.Runtime = h.Runtime
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
