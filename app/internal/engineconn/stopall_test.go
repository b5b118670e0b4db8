package engineconn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestStopAllLeavesOtherInstallations: the tray's Stop all (and Pause)
// removes this installation's sandboxes and never another installation's
// (another user's, another state directory's) or an unlabelled one on the
// same engine.
func TestStopAllLeavesOtherInstallations(t *testing.T) {
	cli := apptest.Docker(t, apptest.PythonImage)
	defer cli.Close()
	log := slog.New(slog.DiscardHandler)
	be := docker.New(cli, log)
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inst, err := st.InstallationID()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	create := func(installation string, pool bool) string {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		id := "st" + hex.EncodeToString(b)
		labels := map[string]string{backend.LabelManaged: "true", backend.LabelID: id, backend.LabelOwner: "stopall-test-" + id}
		if installation != "" {
			labels[backend.LabelInstallation] = installation
		}
		name := backend.ContainerName(id)
		if pool {
			labels[backend.LabelPool] = "true"
			name = backend.PoolNamePrefix + id
		}
		cid, err := be.Create(ctx, backend.ContainerSpec{
			Name: name, Image: apptest.PythonImage, User: "1000:1000", Labels: labels,
			MemoryBytes: 64 << 20, NanoCPUs: 5e8, Pids: 32, WorkspaceMB: 8, TmpMB: 8,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = be.Remove(context.Background(), cid) })
		return cid
	}
	mine := []string{create(inst, false), create(inst, true)}
	others := []string{create("0123456789abcdef0123456789abcdef", false), create("", false)}
	n, err := StopAll(ctx, be, st, log)
	if want := (sandboxwatch.Count{Sandboxes: 1, Warm: 1}); err != nil || n != want {
		t.Errorf("StopAll = %+v, %v; want %+v (this installation's, the warm one apart)", n, err, want)
	}
	for _, c := range mine {
		if _, err := cli.ContainerInspect(ctx, c); err == nil {
			t.Error("this installation's sandbox is still there")
		}
	}
	for _, c := range others {
		if _, err := cli.ContainerInspect(ctx, c); err != nil {
			t.Errorf("another installation's sandbox was removed: %v", err)
		}
	}
}
