package sandbox_test

// The reaping rules (sandbox/inventory) on the fake
// backend, in synctest bubbles: a reaper removes a container or volume
// only with proof that its owner is gone (the owner's lock in this
// installation's state directory is free, or its file absent), and
// expires a live owner's sandbox only from its last use as the owner
// recorded it. Not seeing an owner is never proof.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// otherInstallation is an installation id no test state directory has.
const otherInstallation = "0123456789abcdef0123456789abcdef"

func openState(t *testing.T) (*state.Store, string) {
	t.Helper()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inst, err := st.InstallationID()
	if err != nil {
		t.Fatal(err)
	}
	return st, inst
}

// orphan describes a container another server made.
type orphan struct {
	id, installation, owner string
	expires                 time.Time // the creation-time label
	exited                  bool
	record                  *state.Record // what its owner recorded, if anything
}

func putOrphan(t *testing.T, be *fake.Backend, st *state.Store, o orphan) {
	t.Helper()
	host, _ := os.Hostname()
	labels := map[string]string{
		backend.LabelManaged: "true", backend.LabelID: o.id, backend.LabelOwner: o.owner,
		// A pid that is not alive here, on this host: the old rule's proof.
		backend.LabelOwnerPID: "999999999", backend.LabelOwnerHost: host,
		backend.LabelExpiresAt: o.expires.UTC().Format(time.RFC3339),
	}
	if o.installation != "" {
		labels[backend.LabelInstallation] = o.installation
	}
	cid := be.Put(backend.ContainerSpec{Name: backend.ContainerName(o.id), Image: fake.DefaultImage, Labels: labels})
	if o.exited {
		be.Exit(cid, backend.ContainerExit{ExitCode: 1})
	}
	if o.record != nil {
		r := *o.record
		r.ID, r.ContainerID, r.Owner = o.id, cid, o.owner
		if err := st.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
}

func containerNames(be *fake.Backend) string {
	var names []string
	for _, c := range be.Containers() {
		names = append(names, strings.TrimPrefix(c.Name, backend.NamePrefix))
	}
	return strings.Join(sorted(names), ",")
}

// TestFakeReapRules: each rule on its own container, one reaping pass.
func TestFakeReapRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, inst := openState(t)
		eng, be := fakeEngine(t, st, nil)
		live, err := st.LockServer("liveserver")
		if err != nil {
			t.Fatal(err)
		}
		defer live.Release()
		// A server that died without clean-up: its lock file is there,
		// unlocked.
		if err := os.WriteFile(filepath.Join(st.Dir(), "servers", "crashed.lock"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		past, later := now.Add(-time.Hour), now.Add(time.Hour)
		idle := &state.Record{LastUsed: past, ExpiresAt: past}
		for _, o := range []orphan{
			// Proof: the owner's lock is free, or its file is absent.
			{id: "crashedowner", installation: inst, owner: "crashed", expires: later},
			{id: "nolockfile", installation: inst, owner: "vanished", expires: later},
			{id: "crashedexited", installation: inst, owner: "crashed", expires: later, exited: true},
			// A live owner: only its own record of last use can expire it.
			{id: "liveused", installation: inst, owner: "liveserver", expires: past, record: &state.Record{LastUsed: now.Add(-time.Minute), ExpiresAt: now.Add(29 * time.Minute)}},
			{id: "livenorecord", installation: inst, owner: "liveserver", expires: past},
			{id: "liveexited", installation: inst, owner: "liveserver", expires: later, exited: true},
			{id: "liveidle", installation: inst, owner: "liveserver", expires: later, record: idle},
			{id: "livebusy", installation: inst, owner: "liveserver", expires: past, record: &state.Record{LastUsed: past, ExpiresAt: past, Busy: true}},
			{id: "livegrace", installation: inst, owner: "liveserver", expires: past, record: &state.Record{LastUsed: now.Add(-31 * time.Minute), ExpiresAt: now.Add(-time.Minute)}},
			// Not seeing the owner is no proof.
			{id: "otherinst", installation: otherInstallation, owner: "vanished", expires: past, exited: true},
			{id: "legacy", owner: "vanished", expires: past, exited: true},
			{id: "noowner", installation: inst, expires: past},
			{id: "badowner", installation: inst, owner: "../../x", expires: past},
		} {
			putOrphan(t, be, st, o)
		}
		own, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash", TTLMinutes: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Reap(context.Background(), sandbox.ReapRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(sorted(res.Removed), ","), "crashedexited,crashedowner,liveidle,nolockfile"; got != want {
			t.Errorf("reaped %s, want %s", got, want)
		}
		want := strings.Join(sorted([]string{own.ID, "liveused", "livenorecord", "liveexited", "livebusy", "livegrace", "otherinst", "legacy", "noowner", "badowner"}), ",")
		if got := containerNames(be); got != want {
			t.Errorf("left %s,\nwant %s", got, want)
		}
		if _, err := st.ReadRecord("liveidle"); err == nil {
			t.Error("the reaped sandbox's record is still there")
		}
		if _, err := os.Stat(filepath.Join(st.Dir(), "servers", "crashed.lock")); !os.IsNotExist(err) {
			t.Errorf("the gone owner's lock file is still there: %v", err)
		}
	})
}

// TestFakeReapAnotherStateDir: a server with another state directory
// (another installation) on the same engine reaps nothing of a live
// server's, though the sandbox's creation-time expiry passed long ago and
// its owner's process cannot be seen; the sandbox keeps working.
func TestFakeReapAnotherStateDir(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stA, _ := openState(t)
		engA, be := fakeEngine(t, stA, nil)
		sb, err := engA.Create(context.Background(), sandbox.CreateRequest{Language: "bash", TTLMinutes: 5})
		if err != nil {
			t.Fatal(err)
		}
		// Used every four minutes for an hour: its creation-time label
		// expired after five.
		for range 15 {
			advance(4 * time.Minute)
			if _, err := engA.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "true"}); err != nil {
				t.Fatalf("exec: %v", err)
			}
		}
		stB, _ := openState(t)
		engB, _ := fakeEngineOn(t, be, stB, fakeTick, nil)
		res, err := engB.Reap(context.Background(), sandbox.ReapRequest{})
		if err != nil || len(res.Removed) != 0 {
			t.Errorf("another installation's reaper removed %v (%v)", res.Removed, err)
		}
		if res, err := engA.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "echo alive"}); err != nil || res.Stdout != "alive\n" {
			t.Errorf("the sandbox after the other reaper: %+v, %v", res, err)
		}
	})
}

// TestFakeReapSameStateDir: a second server of the same installation
// (another process, another PID namespace: the lock is all it asks) reaps
// nothing of a live first server's; once the first is gone without
// clean-up, it reaps all of it.
func TestFakeReapSameStateDir(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, inst := openState(t)
		engA, be := fakeEngine(t, st, nil)
		sb, err := engA.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		reap := func() ([]string, error) {
			res, err := inventory.Reap(context.Background(), be, st, inventory.ReapRequest{Self: "secondserver"})
			return res.Removed, err
		}
		removed, err := reap()
		if err != nil || len(removed) != 0 {
			t.Fatalf("reaped a live server's sandboxes: %v (%v)", removed, err)
		}
		if _, err := engA.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "true"}); err != nil {
			t.Errorf("the sandbox after the reaper: %v", err)
		}
		// A dead server of the same installation, its lock released by
		// the kernel (the file stays).
		dead, err := st.LockServer("deadserver")
		if err != nil {
			t.Fatal(err)
		}
		putOrphan(t, be, st, orphan{id: "deadsandbox", installation: inst, owner: "deadserver", expires: time.Now().Add(time.Hour)})
		if removed, _ := reap(); len(removed) != 0 {
			t.Fatalf("reaped %v while its owner held its lock", removed)
		}
		if err := dead.Release(); err != nil {
			t.Fatal(err)
		}
		removed, err = reap()
		if err != nil || strings.Join(removed, ",") != "deadsandbox" {
			t.Errorf("reaped %v (%v), want deadsandbox", removed, err)
		}
	})
}

// TestFakeVolumeSweep: the same rules for unused volumes.
func TestFakeVolumeSweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, inst := openState(t)
		eng, be := fakeEngine(t, st, nil)
		live, err := st.LockServer("liveserver")
		if err != nil {
			t.Fatal(err)
		}
		defer live.Release()
		vol := func(name, installation, owner string) {
			l := map[string]string{backend.LabelManaged: "true", backend.LabelOwner: owner,
				backend.LabelOwnerPID: "999999999", backend.LabelOwnerHost: "here",
				backend.LabelExpiresAt: time.Now().Add(-time.Hour).UTC().Format(time.RFC3339),
				backend.LabelCreatedAt: time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)}
			if installation != "" {
				l[backend.LabelInstallation] = installation
			}
			be.PutVolume(name, l)
		}
		vol("gone-ws", inst, "goneserver")
		vol("live-ws", inst, "liveserver")
		vol("other-ws", otherInstallation, "goneserver")
		vol("legacy-ws", "", "goneserver")
		sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		before := len(be.Volumes())
		if _, err := eng.Reap(context.Background(), sandbox.ReapRequest{}); err != nil {
			t.Fatal(err)
		}
		after := be.Volumes()
		if len(after) != before-1 || strings.Contains(strings.Join(after, ","), "gone-ws") {
			t.Errorf("volumes %v after the sweep; want all but gone-ws", after)
		}
		if _, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "true"}); err != nil {
			t.Errorf("own sandbox after the sweep: %v", err)
		}
	})
}

// TestFakeLimitIsPerInstallation: max_sandboxes counts this installation's
// sandboxes (all its servers'), not another installation's on the engine,
// and the refusal says whose sandboxes hold it.
func TestFakeLimitIsPerInstallation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, inst := openState(t)
		be := fake.New()
		for i := range 3 {
			putOrphan(t, be, st, orphan{id: "other" + strconv.Itoa(i), installation: otherInstallation, owner: "x", expires: time.Now().Add(time.Hour)})
		}
		eng, _ := fakeEngineOn(t, be, st, fakeTick, func(c *config.Config) { c.Limits.MaxSandboxes = 2 })
		if _, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"}); err != nil {
			t.Fatalf("another installation's sandboxes refused this one's first: %v", err)
		}
		live, err := st.LockServer("sibling")
		if err != nil {
			t.Fatal(err)
		}
		defer live.Release()
		putOrphan(t, be, st, orphan{id: "sibling1", installation: inst, owner: "sibling", expires: time.Now().Add(time.Hour)})
		_, err = eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if !errors.Is(err, sandbox.ErrLimit) {
			t.Fatalf("third of this installation's: %v, want ErrLimit", err)
		}
		for _, want := range []string{"2 sandboxes of this MCP Sandbox installation", "1 of the running ones were made by other servers of this installation"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not say %q", err, want)
			}
		}
	})
}

// TestFakeNoLockNoSandboxes: a server that cannot take its lock (another
// process holds it) makes nothing, since no reaper could tell it alive.
func TestFakeNoLockNoSandboxes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, _ := openState(t)
		held, err := st.LockServer("fake-owner") // fakeEngine's owner id
		if err != nil {
			t.Fatal(err)
		}
		defer held.Release()
		eng, be := fakeEngine(t, st, func(c *config.Config) { c.Pool.Size, c.Pool.Languages = 1, []string{"python"} })
		synctest.Wait()
		_, err = eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if !errors.Is(err, state.ErrServerLock) {
			t.Errorf("create without the lock: %v, want ErrServerLock", err)
		}
		if n := len(be.Containers()); n != 0 {
			t.Errorf("%d containers made without the lock (pool included)", n)
		}
	})
}

// TestFakeReapAbandonedProbe: a probe (a helper for no sandbox, the
// doctor's) carries no installation and no owner: every reaper removes it,
// with its volume, once it is backend.ProbeLifetime old, and not before;
// the install helper of a live owner stays however old.
func TestFakeReapAbandonedProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, inst := openState(t)
		live, err := st.LockServer("liveserver")
		if err != nil {
			t.Fatal(err)
		}
		defer live.Release()
		be := fake.New()
		probeLabels := map[string]string{backend.LabelManaged: "true", backend.LabelHelper: backend.HelperProbe}
		probe := be.Put(backend.ContainerSpec{Name: "mcp-sandbox-helper-p", Image: fake.DefaultImage, Labels: probeLabels})
		be.PutVolume("mcp-sandbox-helper-q-workspace", probeLabels)
		helper := be.Put(backend.ContainerSpec{Name: "mcp-sandbox-helper-h", Image: fake.DefaultImage, Labels: map[string]string{
			backend.LabelManaged: "true", backend.LabelHelper: "sb1", backend.LabelID: "sb1-install",
			backend.LabelInstallation: inst, backend.LabelOwner: "liveserver",
		}})
		there := func() (probes, helpers int) {
			for _, c := range be.Containers() {
				switch c.ID {
				case probe:
					probes++
				case helper:
					helpers++
				}
			}
			return probes + len(be.Volumes()), helpers
		}
		reap := func() {
			t.Helper()
			if _, err := inventory.Reap(context.Background(), be, st, inventory.ReapRequest{Self: "reaper"}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(backend.ProbeLifetime - time.Minute)
		reap()
		if p, h := there(); p != 2 || h != 1 {
			t.Fatalf("young probe: %d of its container and volume, %d helper left; want 2, 1", p, h)
		}
		time.Sleep(2 * time.Minute)
		reap()
		if p, h := there(); p != 0 || h != 1 {
			t.Errorf("old probe: %d of its container and volume, %d helper left; want 0, 1", p, h)
		}
	})
}
