package backend

import (
	"fmt"
	"strconv"
	"strings"
)

// Hardening is what every container a backend makes gets and no caller
// chooses: the one description that the Docker backend renders into a
// container's configuration and the Kubernetes backend into a pod. Each
// backend's tests read what it rendered back into a Hardening and compare
// it with this one field by field, so a rule added here that a backend
// does not render fails there (or is listed there as one its platform
// cannot carry, with the reason). sandbox/README.md §Hardening defaults is
// the contract it implements; nothing in it can be turned off.
type Hardening struct {
	// UID and GID run the container's own processes, not only its execs;
	// never root.
	UID, GID int64
	// Egress gives the container a network with egress; without it the
	// container has no interface but loopback (or, on a pod network, a
	// deny-all policy).
	Egress bool
	// ReadOnlyRoot: the image's filesystem is read-only; the workspace and
	// /tmp are the only writable places.
	ReadOnlyRoot bool
	// NoNewPrivileges: setuid binaries and file capabilities cannot raise
	// privileges.
	NoNewPrivileges bool
	// DropAllCaps drops every Linux capability and adds none.
	DropAllCaps bool
	// DefaultSeccomp: the runtime's default seccomp profile, never
	// unconfined.
	DefaultSeccomp bool
	// NoHostAccess: not privileged; no host namespace, mount or device,
	// no engine socket or platform credentials.
	NoHostAccess bool
	// NeverRestart: a container that ends stays ended.
	NeverRestart bool
	// Init runs an init process as PID 1, which reaps zombies and
	// forwards signals.
	Init bool
	// NoLogs keeps the container's output out of the engine's logs.
	NoLogs bool
	// WorkspaceMB and TmpMB cap Workspace and /tmp: memory-backed, owned
	// by UID:GID.
	WorkspaceMB, TmpMB int
	// MemoryBytes is the memory limit; NoSwap: with no swap beyond it.
	MemoryBytes int64
	NoSwap      bool
	NanoCPUs    int64
	// Pids is the sandbox's own process limit (a backend may add room for
	// the runtime's threads, as Docker does for gVisor's).
	Pids int64
	// NofileSoft and NofileHard are the open files limit.
	NofileSoft, NofileHard int64
	// NoCoreDumps: a crash writes no core file.
	NoCoreDumps bool
	// OOMScoreAdj is raised so that the kernel kills a sandbox first when
	// memory runs short.
	OOMScoreAdj int
	// Runtime is the OCI runtime ("" the engine's default, "runc",
	// "runsc"): the one place a choice enters, made by the engine's policy.
	Runtime string
}

// Defaults of a spec's sizes.
const (
	DefaultWorkspaceMB = 512
	DefaultTmpMB       = 64
)

// HardeningFor is the hardening of a container made from spec: the single
// source of what a sandbox (or an install helper) gets. Sizes left zero
// get their defaults; a user that is root or not numeric is an error,
// never a weaker container.
func HardeningFor(spec ContainerSpec) (Hardening, error) {
	uid, gid, err := ParseUser(spec.User)
	if err != nil {
		return Hardening{}, err
	}
	return Hardening{
		UID: uid, GID: gid,
		Egress:       spec.Network == "egress",
		ReadOnlyRoot: true, NoNewPrivileges: true, DropAllCaps: true, DefaultSeccomp: true,
		NoHostAccess: true, NeverRestart: true, Init: true, NoLogs: true,
		WorkspaceMB: orDefault(spec.WorkspaceMB, DefaultWorkspaceMB),
		TmpMB:       orDefault(spec.TmpMB, DefaultTmpMB),
		MemoryBytes: spec.MemoryBytes, NoSwap: true, NanoCPUs: spec.NanoCPUs, Pids: spec.Pids,
		NofileSoft: 1024, NofileHard: 4096, NoCoreDumps: true, OOMScoreAdj: 500,
		Runtime: spec.Runtime,
	}, nil
}

// User is h's user as "uid:gid".
func (h Hardening) User() string { return fmt.Sprintf("%d:%d", h.UID, h.GID) }

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// ParseUser parses "uid:gid" (gid defaults to uid; empty: 1000:1000) and
// refuses root and names.
func ParseUser(u string) (uid, gid int64, err error) {
	if u == "" {
		u = "1000:1000"
	}
	us, gs, ok := strings.Cut(u, ":")
	if !ok {
		gs = us
	}
	uid, err1 := strconv.ParseInt(us, 10, 64)
	gid, err2 := strconv.ParseInt(gs, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("user %q is not numeric uid:gid: give the sandbox user by number", u)
	}
	if uid <= 0 || gid < 0 {
		return 0, 0, fmt.Errorf("user %q: sandboxes never run as root: give a non-root uid", u)
	}
	return uid, gid, nil
}
