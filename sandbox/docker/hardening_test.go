package docker

import (
	"slices"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

func apply(opt Option, spec sandbox.ContainerSpec) *createConfig {
	c := &createConfig{Config: &container.Config{}, Host: &container.HostConfig{}}
	opt(c, spec)
	return c
}

// Each hardening option is tested alone: what it sets, and that a policy
// can relax the ones that may be relaxed.
func TestHardeningOptions(t *testing.T) {
	spec := sandbox.ContainerSpec{User: "1000:1000", MemoryBytes: 128 << 20, NanoCPUs: 5e8, Pids: 64, TmpMB: 32}
	t.Run("no network", func(t *testing.T) {
		c := apply(WithNoNetwork, spec)
		if c.Host.NetworkMode != "none" || !c.Config.NetworkDisabled {
			t.Errorf("network = %q disabled=%v", c.Host.NetworkMode, c.Config.NetworkDisabled)
		}
		eg := spec
		eg.Network = "egress"
		if c := apply(WithNoNetwork, eg); c.Host.NetworkMode != "bridge" {
			t.Errorf("egress network = %q", c.Host.NetworkMode)
		}
	})
	t.Run("cap drop", func(t *testing.T) {
		c := apply(WithCapDropAll, spec)
		if diff := cmp.Diff([]string{"ALL"}, []string(c.Host.CapDrop)); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("no new privileges", func(t *testing.T) {
		c := apply(WithNoNewPrivileges, spec)
		if !slices.Contains(c.Host.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("SecurityOpt = %v", c.Host.SecurityOpt)
		}
	})
	t.Run("read-only root", func(t *testing.T) {
		if c := apply(WithReadOnlyRoot, spec); !c.Host.ReadonlyRootfs {
			t.Error("root is writable")
		}
		r := spec
		r.Relax = []string{ItemReadOnlyRoot}
		if c := apply(WithReadOnlyRoot, r); c.Host.ReadonlyRootfs {
			t.Error("relaxed read_only_root still read-only")
		}
	})
	t.Run("user", func(t *testing.T) {
		if c := apply(WithUser, spec); c.Config.User != "1000:1000" {
			t.Errorf("User = %q", c.Config.User)
		}
	})
	t.Run("tmp", func(t *testing.T) {
		c := apply(WithTmp, spec)
		want := "rw,nosuid,nodev,size=32m,uid=1000,gid=1000,mode=1777"
		if c.Host.Tmpfs["/tmp"] != want {
			t.Errorf("tmpfs = %q, want %q", c.Host.Tmpfs["/tmp"], want)
		}
	})
	t.Run("workspace", func(t *testing.T) {
		// The volume is made by the container create, with the driver's
		// tmpfs options and the labels, never in a call of its own.
		v := Volume{Name: "vol", Target: "/workspace", DriverOpts: tmpfsVolume(64, "1000", "1000", "0755"), Labels: map[string]string{"k": "v"}}
		c := apply(WithWorkspace(v), spec)
		want := []mount.Mount{{
			Type: mount.TypeVolume, Source: "vol", Target: "/workspace",
			VolumeOptions: &mount.VolumeOptions{
				NoCopy: true, Labels: map[string]string{"k": "v"},
				DriverConfig: &mount.Driver{Name: "local", Options: map[string]string{
					"type": "tmpfs", "device": "tmpfs", "o": "size=64m,uid=1000,gid=1000,mode=0755,nosuid,nodev",
				}},
			},
		}}
		if diff := cmp.Diff(want, c.Host.Mounts); diff != "" {
			t.Errorf("mounts (-want +got):\n%s", diff)
		}
		if c.Config.WorkingDir != "/workspace" {
			t.Errorf("WorkingDir = %q", c.Config.WorkingDir)
		}
	})
	t.Run("limits", func(t *testing.T) {
		c := apply(WithLimits, spec)
		r := c.Host.Resources
		if r.Memory != 128<<20 || r.MemorySwap != r.Memory || r.NanoCPUs != 5e8 || *r.PidsLimit != 64 || c.Host.OomScoreAdj <= 0 {
			t.Errorf("resources = %+v oom=%d", r, c.Host.OomScoreAdj)
		}
		var nofile bool
		for _, u := range r.Ulimits {
			nofile = nofile || u.Name == "nofile" && u.Hard > 0
		}
		if !nofile {
			t.Error("no nofile ulimit")
		}
	})
	t.Run("limits under gVisor", func(t *testing.T) {
		r := spec
		r.Runtime = "runsc"
		c := apply(WithLimits, r)
		if got := *c.Host.Resources.PidsLimit; got != spec.Pids+GVisorThreads {
			t.Errorf("pids limit = %d, want %d: the sandbox's own and room for gVisor's threads", got, spec.Pids+GVisorThreads)
		}
	})
	t.Run("init", func(t *testing.T) {
		if c := apply(WithInit, spec); c.Host.Init == nil || !*c.Host.Init {
			t.Error("no init")
		}
	})
	t.Run("isolation", func(t *testing.T) {
		c := apply(WithIsolation, spec)
		if c.Host.Privileged || len(c.Host.Binds) > 0 || len(c.Host.Devices) > 0 || c.Host.IpcMode != "private" {
			t.Errorf("host = %+v", c.Host)
		}
	})
	t.Run("runtime", func(t *testing.T) {
		r := spec
		r.Runtime = "runsc"
		if c := apply(WithRuntime, r); c.Host.Runtime != "runsc" {
			t.Errorf("runtime = %q", c.Host.Runtime)
		}
	})
}
