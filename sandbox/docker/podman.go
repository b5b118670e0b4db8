package docker

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Podman serves the Docker API (podman system service) with a few
// differences the backend adapts to here, so that the rest of the package
// speaks one dialect.

// engineFacts is what the engine says of itself on /version, asked once
// per backend.
type engineFacts struct {
	podman bool
	arch   string // GOARCH-style (amd64, arm64), "" if not said
}

// engineAskTimeout bounds the question: Podman builds its /version answer
// from all it reports on /info (the versions of conmon and of the OCI
// runtime, its storage), which takes a second when idle and several under
// load.
const engineAskTimeout = 60 * time.Second

// facts returns what the engine says of itself. The question is asked
// once, by one goroutine under its own bound, whatever the deadline of the
// caller who needed it first: a caller that gives up early does not leave
// the next one to start over. An engine that does not answer is an error,
// never taken for one engine or the other; the next call asks again.
func (b *Backend) facts(ctx context.Context) (engineFacts, error) {
	b.factsMu.Lock()
	if b.known != nil {
		f := *b.known
		b.factsMu.Unlock()
		return f, nil
	}
	if b.asking == nil {
		b.asking = make(chan struct{})
		go b.ask(b.asking)
	}
	asking := b.asking
	b.factsMu.Unlock()
	select {
	case <-asking:
	case <-ctx.Done():
		return engineFacts{}, ctx.Err()
	}
	b.factsMu.Lock()
	defer b.factsMu.Unlock()
	if b.known != nil {
		return *b.known, nil
	}
	return engineFacts{}, b.askErr
}

// ask asks the engine's /version and closes done with the answer recorded.
func (b *Backend) ask(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), engineAskTimeout)
	defer cancel()
	v, err := b.cli.ServerVersion(ctx)
	b.factsMu.Lock()
	defer b.factsMu.Unlock()
	defer close(done)
	b.asking = nil
	if err != nil {
		b.askErr = b.wrap("ask the engine's version", err)
		return
	}
	f := engineFacts{arch: v.Arch, podman: strings.Contains(strings.ToLower(v.Platform.Name), "podman")}
	for _, c := range v.Components {
		f.podman = f.podman || strings.Contains(strings.ToLower(c.Name), "podman")
	}
	b.known, b.askErr = &f, nil
	// Detection at start-up may have given up on a slow /version (Podman
	// under load): say what the engine is once it has said it.
	engine := "Docker-compatible engine"
	if f.podman {
		engine = "Podman"
	}
	b.log.Info("engine identified", "engine", engine, "version", v.Version, "os", v.Os+"/"+v.Arch, "api", v.APIVersion)
}

// isPodman reports whether the engine is Podman.
func (b *Backend) isPodman(ctx context.Context) (bool, error) {
	f, err := b.facts(ctx)
	return f.podman, err
}

// tmpfsOwner is the owner part of a tmpfs mount's options.
var tmpfsOwner = regexp.MustCompile(`,uid=[0-9]+,gid=[0-9]+`)

// adaptCreate rewrites a container's configuration for the engine and
// returns the volumes the create will make (to check and to discard on
// failure). On Docker that is vols, unchanged. An engine that does not say
// which it is is an error.
//
// Podman (4.3, Debian 12's) differs in four ways:
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
func (b *Backend) adaptCreate(ctx context.Context, cc *createConfig, vols []Volume) ([]Volume, error) {
	podman, err := b.isPodman(ctx)
	if err != nil {
		return nil, err
	}
	if !podman {
		return vols, nil
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
	return nil, nil
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
