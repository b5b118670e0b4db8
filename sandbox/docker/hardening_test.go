package docker

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/backendtest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// readContainer reads a container's configuration (the create request, or
// an inspect of the container) back into the hardening it carries: each
// field is set only when every part of its rule is there.
func readContainer(cfg *container.Config, host *container.HostConfig) backend.Hardening {
	var h backend.Hardening
	if uid, gid, err := backend.ParseUser(cfg.User); err == nil && cfg.User != "" {
		h.UID, h.GID = uid, gid
	}
	// Anything but no interface at all is a network.
	h.Egress = host.NetworkMode != "none" || !cfg.NetworkDisabled
	h.ReadOnlyRoot = host.ReadonlyRootfs
	h.NoNewPrivileges = slices.Contains(host.SecurityOpt, "no-new-privileges:true") || slices.Contains(host.SecurityOpt, "no-new-privileges")
	h.DropAllCaps = slices.Equal(host.CapDrop, []string{"ALL"}) && len(host.CapAdd) == 0
	h.DefaultSeccomp = !host.Privileged && !slices.ContainsFunc(host.SecurityOpt, func(o string) bool { return strings.HasPrefix(o, "seccomp") })
	h.NoHostAccess = !host.Privileged && host.IpcMode == "private" && host.PidMode == "" && host.NetworkMode != "host" &&
		host.UTSMode == "" && len(host.Binds) == 0 && len(host.Devices) == 0 &&
		!slices.ContainsFunc(host.Mounts, func(m mount.Mount) bool { return m.Type == mount.TypeBind })
	h.NeverRestart = host.RestartPolicy.Name == "no"
	h.Init = host.Init != nil && *host.Init
	h.NoLogs = host.LogConfig.Type == "none"
	h.WorkspaceMB = workspaceRead(host, cfg.User)
	h.TmpMB = ownedMB(host.Tmpfs["/tmp"], cfg.User)
	readLimits(&h, host)
	return h
}

// readLimits reads the resource limits, the ulimits and the OOM score.
func readLimits(h *backend.Hardening, host *container.HostConfig) {
	r := host.Resources
	h.MemoryBytes, h.NanoCPUs = r.Memory, r.NanoCPUs
	h.NoSwap = r.Memory > 0 && r.MemorySwap == r.Memory
	if r.PidsLimit != nil {
		h.Pids = *r.PidsLimit
		if host.Runtime == "runsc" {
			h.Pids -= GVisorThreads
		}
	}
	for _, u := range r.Ulimits {
		switch u.Name {
		case "nofile":
			h.NofileSoft, h.NofileHard = u.Soft, u.Hard
		case "core":
			h.NoCoreDumps = u.Soft == 0 && u.Hard == 0
		}
	}
	h.OOMScoreAdj = host.OomScoreAdj
	h.Runtime = host.Runtime
}

// workspaceRead is the size of the workspace when it is a memory-backed
// place owned by user: a tmpfs volume made by the create, or (Podman) a
// tmpfs mount; 0 otherwise.
func workspaceRead(host *container.HostConfig, user string) int {
	if o, ok := host.Tmpfs[backend.Workspace]; ok {
		return ownedMB(o, user)
	}
	for _, m := range host.Mounts {
		if m.Target != backend.Workspace || m.Type != mount.TypeVolume || m.VolumeOptions == nil || m.VolumeOptions.DriverConfig == nil {
			continue
		}
		if o := m.VolumeOptions.DriverConfig.Options; o["type"] == "tmpfs" {
			return ownedMB(o["o"], user)
		}
	}
	return 0
}

// ownedMB is the size in MiB of a tmpfs with options opts when it is
// nosuid, nodev and owned by user ("uid:gid"; Podman's U: the container's
// user); 0 otherwise.
func ownedMB(opts, user string) int {
	uid, gid, _ := strings.Cut(user, ":")
	o := strings.Split(opts, ",")
	owned := slices.Contains(o, "U") || slices.Contains(o, "uid="+uid) && slices.Contains(o, "gid="+gid)
	if !owned || !slices.Contains(o, "nosuid") || !slices.Contains(o, "nodev") {
		return 0
	}
	for _, kv := range o {
		if v, ok := strings.CutPrefix(kv, "size="); ok {
			if mb, err := strconv.Atoi(strings.TrimSuffix(v, "m")); err == nil {
				return mb
			}
		}
	}
	return 0
}

var testTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testHardeningSpec(network, runtime string) backend.ContainerSpec {
	return backend.ContainerSpec{
		Name: backend.NamePrefix + "hard" + randomSuffix(), Image: testenv.TinyImage, User: "1000:1000", Network: network,
		MemoryBytes: 128 << 20, NanoCPUs: 5e8, Pids: 64, WorkspaceMB: 32, TmpMB: 16, Runtime: runtime,
		Labels: map[string]string{backend.LabelManaged: "true", backend.LabelID: "hard"},
	}
}

// TestHardeningRendered renders the hardening of a spec into a create
// request and reads it back: every rule of backend.Hardening is there.
func TestHardeningRendered(t *testing.T) {
	for _, network := range []string{"none", "egress"} {
		for _, runtime := range []string{"runc", "runsc"} {
			t.Run(network+" "+runtime, func(t *testing.T) {
				spec := testHardeningSpec(network, runtime)
				want, err := backend.HardeningFor(spec)
				if err != nil {
					t.Fatal(err)
				}
				c := newCreateConfig(spec.Image, nil, nil, want, sandboxVolumes(spec, testTime)[0])
				backendtest.CompareHardening(t, want, readContainer(c.Config, c.Host), nil)
			})
		}
	}
}

// TestHardeningReadBackFails: the read-back sees each rule go.
func TestHardeningReadBackFails(t *testing.T) {
	spec := testHardeningSpec("none", "runc")
	h, _ := backend.HardeningFor(spec)
	for name, breakIt := range map[string]func(*createConfig){
		"user":        func(c *createConfig) { c.Config.User = "" },
		"cap add":     func(c *createConfig) { c.Host.CapAdd = []string{"NET_RAW"} },
		"seccomp":     func(c *createConfig) { c.Host.SecurityOpt = append(c.Host.SecurityOpt, "seccomp=unconfined") },
		"bind":        func(c *createConfig) { c.Host.Binds = []string{"/:/host"} },
		"tmp owner":   func(c *createConfig) { c.Host.Tmpfs["/tmp"] = "rw,nosuid,nodev,size=16m" },
		"swap":        func(c *createConfig) { c.Host.MemorySwap = -1 },
		"network":     func(c *createConfig) { c.Host.NetworkMode = "bridge" },
		"core ulimit": func(c *createConfig) { c.Host.Ulimits = c.Host.Ulimits[:1] },
		"workspace dev": func(c *createConfig) {
			c.Host.Mounts[0].VolumeOptions.DriverConfig.Options["o"] = "size=32m,uid=1000,gid=1000"
		},
	} {
		c := newCreateConfig(spec.Image, nil, nil, h, sandboxVolumes(spec, testTime)[0])
		breakIt(c)
		if readContainer(c.Config, c.Host) == h {
			t.Errorf("%s: the read-back does not see it", name)
		}
	}
}

// TestHardeningOnEngine makes a container on Docker (runc, or gVisor with
// MCP_SANDBOX_TEST_RUNTIME=runsc) and reads
// its hardening back from an inspect: what the engine kept, not what was
// asked.
func TestHardeningOnEngine(t *testing.T) {
	cli := testenv.Docker(t, testenv.TinyImage)
	b := New(cli, testenv.Logger(t))
	if podman, err := b.isPodman(t.Context()); err != nil {
		t.Fatal(err)
	} else if podman {
		// Its inspect reports its own forms (every capability by name, no
		// ulimits, runtime "oci"); the request it gets is TestHardeningRendered's.
		t.Skip("Podman's inspect does not report the request's forms")
	}
	runtime := testenv.Runtime()
	if runtime == "" {
		runtime = "runc"
	}
	spec := testHardeningSpec("none", runtime)
	want, err := backend.HardeningFor(spec)
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.Create(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Remove(context.Background(), id) })
	ins, err := cli.ContainerInspect(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	backendtest.CompareHardening(t, want, readContainer(ins.Config, ins.HostConfig), nil)
}

// The workspace volume is made by the container create, with the
// driver's tmpfs options and the labels, never in a call of its own.
func TestWorkspaceMount(t *testing.T) {
	v := Volume{Name: "vol", Target: "/workspace", DriverOpts: tmpfsVolume(64, "1000", "1000", "0755"), Labels: map[string]string{"k": "v"}}
	h, _ := backend.HardeningFor(backend.ContainerSpec{})
	c := newCreateConfig("img", nil, nil, h, v)
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
}

// Docker's form of the rules: what the read-back accepts in more than one
// form is pinned here.
func TestHardeningForm(t *testing.T) {
	spec := testHardeningSpec("none", "runsc")
	h, _ := backend.HardeningFor(spec)
	c := newCreateConfig(spec.Image, nil, nil, h, sandboxVolumes(spec, testTime)[0])
	if got := *c.Host.Resources.PidsLimit; got != spec.Pids+GVisorThreads {
		t.Errorf("pids limit = %d, want %d: the sandbox's own and room for gVisor's threads", got, spec.Pids+GVisorThreads)
	}
	if want := "rw,nosuid,nodev,size=16m,uid=1000,gid=1000,mode=1777"; c.Host.Tmpfs["/tmp"] != want {
		t.Errorf("tmpfs = %q, want %q", c.Host.Tmpfs["/tmp"], want)
	}
	if !c.Config.NetworkDisabled || !slices.Equal(c.Host.SecurityOpt, []string{"no-new-privileges:true"}) {
		t.Errorf("network disabled %v, security options %q", c.Config.NetworkDisabled, c.Host.SecurityOpt)
	}
}
