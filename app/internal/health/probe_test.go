package health

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// probeChildEnv makes this test binary the process whose probe is left
// behind: it runs a probe helper that waits, prints the helper's container
// id, and is killed while the helper runs.
const probeChildEnv = "MCP_SANDBOX_TEST_PROBE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(probeChildEnv) != "" {
		probeChild()
		return
	}
	os.Exit(m.Run())
}

func probeChild() {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	spec := probeSpec(testenv.PythonImage, "python3")
	spec.Cmd = []string{"sleep", "300"}
	spec.Started = func(_ context.Context, id string) (func(), error) {
		fmt.Println("helper", id)
		return func() {}, nil
	}
	_, err = docker.New(cli, slog.New(slog.DiscardHandler)).RunHelper(context.Background(), "", spec)
	fmt.Println("error: the helper ended:", err)
}

// A probe outlives its maker's longest wait for it many times over.
func TestProbeLifetimeBoundsProbes(t *testing.T) {
	if 4*interpreterProbeTimeout > backend.ProbeLifetime {
		t.Errorf("probes are waited for up to %s; backend.ProbeLifetime (%s) leaves too little room", interpreterProbeTimeout, backend.ProbeLifetime)
	}
}

// TestAbandonedProbeReaped: a process killed (SIGKILL) while its
// interpreter probe runs leaves the probe's container and workspace
// volume (Podman: a tmpfs) behind on the real engine; a server's reaper of another
// installation keeps them while they are young and removes both once
// they are backend.ProbeLifetime old. The reaper is shown this probe
// alone (probeOnly): other tests' live probes are not its to judge here.
func TestAbandonedProbeReaped(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	ctx := context.Background()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), probeChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	id, ok := strings.CutPrefix(strings.TrimSpace(line), "helper ")
	if err != nil || !ok {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the probe's maker said %q (%v)", line, err)
	}
	t.Cleanup(func() { _ = docker.New(cli, slog.New(slog.DiscardHandler)).Remove(ctx, id) })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	go io.Copy(io.Discard, out)

	ins, err := cli.ContainerInspect(ctx, id)
	if err != nil {
		t.Fatalf("the abandoned probe is not there to reap: %v", err)
	}
	if ins.Config.Labels[backend.LabelManaged] != "true" || ins.Config.Labels[backend.LabelHelper] != backend.HelperProbe {
		t.Fatalf("the probe's labels: %v", ins.Config.Labels)
	}
	vol := "" // none under Podman, whose workspaces are tmpfs mounts
	for _, m := range ins.Mounts {
		if m.Destination == backend.Workspace {
			vol = m.Name
		}
	}
	if _, podman := ins.HostConfig.Tmpfs[backend.Workspace]; vol == "" && !podman {
		t.Fatalf("the probe has no workspace: %+v", ins.Mounts)
	}

	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	be := probeOnly{docker.New(cli, slog.New(slog.DiscardHandler)), id, vol}
	if _, err := inventory.Reap(ctx, be, st, inventory.ReapRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ContainerInspect(ctx, id); err != nil {
		t.Fatalf("a young probe was reaped: %v", err)
	}
	later := time.Now().Add(backend.ProbeLifetime + time.Minute)
	if _, err := inventory.Reap(ctx, be, st, inventory.ReapRequest{Now: later}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ContainerInspect(ctx, id); !client.IsErrNotFound(err) {
		t.Errorf("the abandoned probe's container is still there (%v)", err)
	}
	if _, err := cli.VolumeInspect(ctx, vol); vol != "" && !client.IsErrNotFound(err) {
		t.Errorf("the abandoned probe's volume %s is still there (%v)", vol, err)
	}
	left, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("id", id))})
	if err != nil || len(left) != 0 {
		t.Errorf("listed after the reap: %v (%v)", left, err)
	}
}

// probeOnly is the real engine as a reaper sees it, with one probe in it:
// its List and its volume sweep see only that probe's container and
// volume.
type probeOnly struct {
	*docker.Backend
	id, vol string
}

func (b probeOnly) List(ctx context.Context) ([]backend.ContainerInfo, error) {
	all, err := b.Backend.List(ctx)
	var out []backend.ContainerInfo
	for _, c := range all {
		if c.ID == b.id {
			out = append(out, c)
		}
	}
	return out, err
}

func (b probeOnly) RemoveOrphanVolumes(ctx context.Context, orphan func(backend.VolumeInfo) bool) ([]string, error) {
	return b.Backend.RemoveOrphanVolumes(ctx, func(v backend.VolumeInfo) bool { return v.Name == b.vol && orphan(v) })
}
