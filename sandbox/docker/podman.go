package docker

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/container"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Podman serves the Docker API (podman system service) with a few
// differences the backend adapts to here, so that the rest of the package
// speaks one dialect.

// isPodman reports whether the engine is Podman (asked once; an engine
// that does not answer is taken for Docker, and the call that needed the
// engine fails on its own).
func (b *Backend) isPodman(ctx context.Context) bool {
	b.mu.Lock()
	known, podman := b.engineKnown, b.podman
	b.mu.Unlock()
	if known {
		return podman
	}
	v, err := b.cli.ServerVersion(ctx)
	if err != nil {
		return false // asked again next time
	}
	podman = strings.Contains(strings.ToLower(v.Platform.Name), "podman")
	for _, c := range v.Components {
		podman = podman || strings.Contains(strings.ToLower(c.Name), "podman")
	}
	b.mu.Lock()
	b.engineKnown, b.podman = true, podman
	b.mu.Unlock()
	return podman
}

// tmpfsOwner is the owner part of a tmpfs mount's options.
var tmpfsOwner = regexp.MustCompile(`,uid=[0-9]+,gid=[0-9]+`)

// adaptCreate rewrites a container's configuration for the engine and
// returns the volumes the create will make (to check and to discard on
// failure). On Docker that is vols, unchanged.
//
// Podman (4.3, Debian 12's) differs in three ways:
//   - it ignores the driver options and labels of a volume mount and makes
//     a plain directory volume, and its local driver cannot cap a tmpfs
//     volume's size (it takes size= for a disk quota), so a sandbox's
//     workspace is a size-capped tmpfs mount of the container instead
//     (Podman's archive API, unlike Docker's, reads and writes tmpfs
//     mounts);
//   - for the same reason there is no install cache that outlives a
//     helper: each package install downloads afresh (a tmpfs of the
//     helper's own);
//   - given any ulimits, it adds an nproc limit of its own of about four
//     million, which a host whose containers may not raise their limits
//     (a nested or unprivileged engine) refuses at start; the sandbox's
//     process count is capped by its pids limit already, so nproc gets a
//     value such hosts allow (podmanNproc);
//   - it refuses uid= and gid= among a tmpfs's options; its "U" option
//     chowns the tmpfs to the container's user, which is the owner the
//     backend asks for (the sandbox user for /tmp and the workspace, the
//     helper's user for its cache).
func (b *Backend) adaptCreate(ctx context.Context, cc *createConfig, vols []Volume) []Volume {
	if !b.isPodman(ctx) {
		return vols
	}
	byName := map[string]Volume{}
	for _, v := range vols {
		byName[v.Name] = v
	}
	mounts := cc.Host.Mounts[:0]
	for _, m := range cc.Host.Mounts {
		v, ours := byName[m.Source]
		switch {
		case !ours:
			mounts = append(mounts, m)
		case v.Target == backend.Workspace:
			cc.Host.Tmpfs[v.Target] = fmt.Sprintf("rw,nosuid,nodev,size=%s,mode=0755,U", tmpfsSize(v.DriverOpts))
		}
	}
	cc.Host.Mounts = mounts
	if !slices.ContainsFunc(cc.Host.Ulimits, func(u *container.Ulimit) bool { return u.Name == "nproc" }) {
		cc.Host.Ulimits = append(cc.Host.Ulimits, &container.Ulimit{Name: "nproc", Soft: podmanNproc, Hard: podmanNproc})
	}
	for dir, opts := range cc.Host.Tmpfs {
		cc.Host.Tmpfs[dir] = tmpfsOwner.ReplaceAllString(opts, ",U")
	}
	return nil
}

// podmanNproc is the nproc limit of a container on Podman: the kernel's
// default pid_max, below what hosts commonly cap root at.
const podmanNproc = 32768

// tmpfsSize is the size= of tmpfsVolume's options.
func tmpfsSize(opts map[string]string) string {
	for _, o := range strings.Split(opts["o"], ",") {
		if v, ok := strings.CutPrefix(o, "size="); ok {
			return v
		}
	}
	return "512m"
}
