package docker

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// testBackend is a backend on the real engine, and an owner id that marks
// what this test makes (other tests share the engine).
func testBackend(t *testing.T) (*Backend, *client.Client, string) {
	t.Helper()
	cli := testenv.Docker(t, testenv.PythonImage)
	return New(cli, nil), cli, "volume-test-" + randomSuffix()
}

// testSpec is a sandbox's spec with an install cache, owned by owner.
func testSpec(owner string) backend.ContainerSpec {
	id := "vt" + randomSuffix()
	return backend.ContainerSpec{
		Name: backend.ContainerName(id), Image: testenv.PythonImage, User: "1000:1000",
		Labels:      map[string]string{backend.LabelManaged: "true", backend.LabelID: id, backend.LabelOwner: owner},
		MemoryBytes: 128 << 20, NanoCPUs: 5e8, Pids: 64, WorkspaceMB: 32, TmpMB: 16, CacheUser: "65533:65533",
	}
}

// ownerCleanup removes whatever the test left with owner's label.
func ownerCleanup(t *testing.T, b *Backend, cli *client.Client, owner string) {
	t.Cleanup(func() {
		ctx := context.Background()
		for _, c := range ownerContainers(t, cli, owner) {
			_ = b.Remove(ctx, c)
		}
		for _, v := range ownerVolumes(t, cli, owner) {
			_ = cli.VolumeRemove(ctx, v, false)
		}
	})
}

func ownerVolumes(t *testing.T, cli *client.Client, owner string) []string {
	t.Helper()
	list, err := cli.VolumeList(context.Background(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", backend.LabelOwner+"="+owner))})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range list.Volumes {
		names = append(names, v.Name)
	}
	return names
}

func ownerContainers(t *testing.T, cli *client.Client, owner string) []string {
	t.Helper()
	b := New(cli, nil)
	list, err := b.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		if c.Labels[backend.LabelOwner] == owner {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

func execOut(t *testing.T, b *Backend, id, user, script string) string {
	t.Helper()
	var out, errb bytes.Buffer
	st, err := b.Exec(context.Background(), id, backend.ExecSpec{Cmd: []string{"sh", "-c", script}, User: user, Stdout: &out, Stderr: &errb})
	if err != nil || st.ExitCode != 0 {
		t.Fatalf("%s: exit %d, %v, stderr %q", script, st.ExitCode, err, errb.String())
	}
	return out.String()
}

// TestCreateMakesCappedWorkspace: the workspace and install cache are made
// by the container create with the tmpfs options and labels, the sandbox
// user owns and can write the workspace, and Remove takes both volumes.
func TestCreateMakesCappedWorkspace(t *testing.T) {
	b, cli, owner := testBackend(t)
	ownerCleanup(t, b, cli, owner)
	ctx := context.Background()
	spec := testSpec(owner)
	id, err := b.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{volumeName(spec.Name), cacheVolumeName(spec.Name)} {
		v, err := cli.VolumeInspect(ctx, name)
		if err != nil {
			t.Fatalf("volume %s: %v", name, err)
		}
		if v.Driver != "local" || v.Options["type"] != "tmpfs" || !strings.Contains(v.Options["o"], "size=32m") ||
			v.Labels[backend.LabelOwner] != owner || v.Labels[backend.LabelCreatedAt] == "" {
			t.Errorf("volume %s: driver %q options %v labels %v", name, v.Driver, v.Options, v.Labels)
		}
	}
	got := execOut(t, b, id, "1000:1000", `echo hi > /workspace/f && cat /workspace/f && stat -f -c '%T %b %S' /workspace && stat -c %u /workspace`)
	if got != "hi\ntmpfs 8192 4096\n1000\n" {
		t.Errorf("workspace from inside: %q, want a 32 MB tmpfs owned by 1000", got)
	}
	if err := b.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if left := ownerVolumes(t, cli, owner); len(left) > 0 {
		t.Errorf("volumes left after Remove: %v", left)
	}
}

// TestCreateRefusesForeignWorkspace: when a volume of the workspace's name
// is already there (the engine would use it as it is: uncapped, on the
// host's disk), the sandbox is not started, nothing of it is left, and the
// volume that was there is not removed.
func TestCreateRefusesForeignWorkspace(t *testing.T) {
	b, cli, owner := testBackend(t)
	ownerCleanup(t, b, cli, owner)
	ctx := context.Background()
	spec := testSpec(owner)
	foreign := volumeName(spec.Name)
	if _, err := cli.VolumeCreate(ctx, volume.CreateOptions{Name: foreign}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.VolumeRemove(context.Background(), foreign, true) })
	_, err := b.Create(ctx, spec)
	if !errors.Is(err, backend.ErrWorkspace) {
		t.Fatalf("create over a foreign volume: %v, want ErrWorkspace", err)
	}
	if !strings.Contains(err.Error(), "is not the capped tmpfs it should be") {
		t.Errorf("message: %v", err)
	}
	if _, err := cli.ContainerInspect(ctx, spec.Name); !cerrdefs.IsNotFound(err) {
		t.Errorf("the container is still there: %v", err)
	}
	if _, err := cli.VolumeInspect(ctx, foreign); err != nil {
		t.Errorf("the volume that was there was removed: %v", err)
	}
	if left := ownerVolumes(t, cli, owner); len(left) > 0 {
		t.Errorf("volumes of the failed create left: %v", left)
	}
}

// TestSweepDuringCreates sweeps this test's unused volumes as fast as it
// can while sandboxes are created: no create loses its workspace, and
// every one is the capped tmpfs.
func TestSweepDuringCreates(t *testing.T) {
	b, cli, owner := testBackend(t)
	ownerCleanup(t, b, cli, owner)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	swept := make(chan int)
	go func() {
		n := 0
		defer func() { swept <- n }()
		// Paced, so the engine other tests share stays responsive.
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			_, _ = b.RemoveOrphanVolumes(ctx, func(v backend.VolumeInfo) bool { return v.Labels[backend.LabelOwner] == owner })
			n++
		}
	}()
	for i := 0; i < 6; i++ {
		spec := testSpec(owner)
		id, err := b.Create(context.Background(), spec)
		if err != nil {
			t.Fatalf("create %d during sweeps: %v", i, err)
		}
		if got := execOut(t, b, id, "1000:1000", `touch /workspace/f && stat -f -c %T /workspace`); got != "tmpfs\n" {
			t.Errorf("create %d: /workspace is %q", i, got)
		}
		if err := b.Remove(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	t.Logf("%d sweeps ran during the creates", <-swept)
}

// TestRemoveConcurrently: two removals of one sandbox at once (a server's
// own and a reaper's) both succeed, and neither leaves a volume.
func TestRemoveConcurrently(t *testing.T) {
	b, cli, owner := testBackend(t)
	ownerCleanup(t, b, cli, owner)
	for i := 0; i < 3; i++ {
		id, err := b.Create(context.Background(), testSpec(owner))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[j] = b.Remove(context.Background(), id)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Errorf("round %d: %v", i, err)
		}
		if left := ownerVolumes(t, cli, owner); len(left) > 0 {
			t.Errorf("round %d: volumes left: %v", i, left)
		}
	}
}

// TestRemoveTakesRunningHelper: removing a sandbox while its install
// helper runs removes the helper too, and every volume of both.
func TestRemoveTakesRunningHelper(t *testing.T) {
	b, cli, owner := testBackend(t)
	ownerCleanup(t, b, cli, owner)
	ctx := context.Background()
	spec := testSpec(owner)
	id, err := b.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	sid := spec.Labels[backend.LabelID]
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := b.RunHelper(ctx, id, backend.HelperSpec{
			Image: testenv.PythonImage, Cmd: []string{"sh", "-c", "echo up; exec sleep 300"}, User: "65533:65533", Network: "none",
			MemoryBytes: 128 << 20, NanoCPUs: 5e8, Pids: 64, WorkspaceMB: 16, CacheDir: "/cache",
			Labels: map[string]string{backend.LabelManaged: "true", backend.LabelHelper: sid, backend.LabelID: sid + "-install", backend.LabelOwner: owner},
			Stdout: writerFunc(func(p []byte) { closeOnce(started) }),
		})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("helper ended before it started: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("helper did not start")
	}
	if err := b.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the helper's run did not end when its sandbox was removed")
	}
	if left := ownerContainers(t, cli, owner); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
	if left := ownerVolumes(t, cli, owner); len(left) > 0 {
		t.Errorf("volumes left: %v", left)
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

var closeMu sync.Mutex

func closeOnce(c chan struct{}) {
	closeMu.Lock()
	defer closeMu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// TestReapTakesDeadOwnersHelper: the start-up reaping of a server of the
// same installation that died during an install (its lock released by the
// kernel) removes its sandbox, the helper, every volume of both, and an
// unused volume of the dead server's that no container holds.
func TestReapTakesDeadOwnersHelper(t *testing.T) {
	b, cli, owner := testBackend(t)
	ownerCleanup(t, b, cli, owner)
	ctx := context.Background()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inst, err := st.InstallationID()
	if err != nil {
		t.Fatal(err)
	}
	lock, err := st.LockServer(owner)
	if err != nil {
		t.Fatal(err)
	}
	spec := testSpec(owner)
	spec.Labels[backend.LabelInstallation] = inst
	id, err := b.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	helperLabels := maps.Clone(spec.Labels)
	helperLabels[backend.LabelHelper] = spec.Labels[backend.LabelID]
	helperLabels[backend.LabelID] += "-install"
	started := make(chan struct{})
	helperCtx, stopHelper := context.WithCancel(ctx)
	defer stopHelper()
	go func() {
		_, _ = b.RunHelper(helperCtx, id, backend.HelperSpec{
			Image: testenv.PythonImage, Cmd: []string{"sh", "-c", "echo up; exec sleep 300"}, User: "65533:65533", Network: "none",
			MemoryBytes: 128 << 20, NanoCPUs: 5e8, Pids: 64, WorkspaceMB: 16, CacheDir: "/cache", Labels: helperLabels,
			Stdout: writerFunc(func(p []byte) { closeOnce(started) }),
		})
	}()
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatal("helper did not start")
	}
	stray := volumeLabels(spec.Labels, time.Now())
	if _, err := cli.VolumeCreate(ctx, volume.CreateOptions{Name: backend.NamePrefix + "vt" + randomSuffix() + "-workspace", Labels: stray}); err != nil {
		t.Fatal(err)
	}
	if n := len(ownerContainers(t, cli, owner)); n != 2 {
		t.Fatalf("%d containers before reaping, want the sandbox and its helper", n)
	}
	if res, err := inventory.Reap(ctx, b, st, inventory.ReapRequest{}); err != nil || len(res.Removed) != 0 {
		t.Fatalf("reaped %v (%v) while the owner held its lock", res.Removed, err)
	}
	if err := lock.Release(); err != nil { // the owner is gone
		t.Fatal(err)
	}
	if _, err := inventory.Reap(ctx, b, st, inventory.ReapRequest{}); err != nil {
		t.Errorf("reap: %v", err)
	}
	if left := ownerContainers(t, cli, owner); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
	if left := ownerVolumes(t, cli, owner); len(left) > 0 {
		t.Errorf("volumes left: %v", left)
	}
}
