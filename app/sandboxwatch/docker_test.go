package sandboxwatch

import (
	"context"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestRealEngine follows a sandbox made by an engine (as a server would make
// it) through the real events stream: it appears, its usage is sampled while
// live, a record change moves its expiry, and it disappears when stopped.
func TestRealEngine(t *testing.T) {
	cli := apptest.Docker(t, apptest.PythonImage)
	be := docker.New(cli, nil)
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Source = "test"
	cfg.Images.Python, cfg.Images.Pull, cfg.Pool.Size = apptest.PythonImage, "never", 0
	eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: config.Static(cfg), State: st})
	t.Cleanup(func() { eng.Close(context.Background()) })

	src := DockerSource{Lister: inventory.Lister{Backend: be, State: st}, Client: cli, RecordsDir: st.Dir() + "/sandboxes"}
	// A stats interval far longer than the test: only events can explain
	// what the model sees, except the first sample, which SetLive takes at
	// once.
	m, snaps := start(t, src, Options{StatsInterval: time.Hour})
	waitSnap(t, snaps, "the first list", func(Snapshot) bool { return true })

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "test-client", MemoryMB: 256})
	if err != nil {
		t.Fatal(err)
	}
	row := func(s Snapshot) (Row, bool) {
		for _, r := range s.Rows {
			if r.ID == sb.ID {
				return r, true
			}
		}
		return Row{}, false
	}
	// The row may first show the container created and not yet started
	// (the engine checks its workspace in between): wait for it running.
	s := waitSnap(t, snaps, "the new sandbox, running", func(s Snapshot) bool { r, ok := row(s); return ok && r.State == "running" })
	r, _ := row(s)
	if r.Client != "test-client" || r.Language != "python" || r.Limits.MemoryMB != 256 || r.Network != "none" || r.State != "running" {
		t.Errorf("row = %+v", r.Info)
	}

	m.SetLive(true)
	s = waitSnap(t, snaps, "usage", func(s Snapshot) bool { r, ok := row(s); return ok && !r.Sampled.IsZero() })
	r, _ = row(s)
	if r.Usage.MemoryBytes == 0 || r.Usage.Pids == 0 {
		t.Errorf("usage = %+v; want memory and pids", r.Usage)
	}
	m.SetLive(false)

	// A server records a new expiry when the sandbox is used.
	rec, err := st.ReadRecord(sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec.ExpiresAt = rec.ExpiresAt.Add(time.Hour).Truncate(time.Second)
	if err := st.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	waitSnap(t, snaps, "the new expiry", func(s Snapshot) bool { r, ok := row(s); return ok && r.ExpiresAt.Equal(rec.ExpiresAt) })

	if _, err := inventory.Stop(ctx, be, st, inventory.StopRequest{ID: sb.ID}); err != nil {
		t.Fatal(err)
	}
	waitSnap(t, snaps, "the sandbox to go", func(s Snapshot) bool { _, ok := row(s); return !ok })
}

// TestEventsOfThisInstallation: the events stream of one installation
// stays quiet while another installation's server makes a sandbox on the
// same engine (another user's, or a test's), and reports its own.
func TestEventsOfThisInstallation(t *testing.T) {
	cli := apptest.Docker(t, apptest.PythonImage)
	be := docker.New(cli, nil)
	engine := func() (*sandbox.Engine, *state.Store) {
		st, err := state.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.Source = "test"
		cfg.Images.Python, cfg.Images.Pull, cfg.Pool.Size = apptest.PythonImage, "never", 0
		eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: config.Static(cfg), State: st})
		t.Cleanup(func() { eng.Close(context.Background()) })
		return eng, st
	}
	mine, st := engine()
	other, _ := engine()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src := DockerSource{Lister: inventory.Lister{Backend: be, State: st}, Client: cli, LifecycleOnly: true}
	evs, _ := src.Events(ctx)
	time.Sleep(500 * time.Millisecond) // the stream is subscribed

	if _, err := other.Create(ctx, sandbox.CreateRequest{Language: "python"}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-evs:
		t.Errorf("an event of another installation's sandbox woke this one: %+v", ev)
	case <-time.After(2 * time.Second):
	}
	if _, err := mine.Create(ctx, sandbox.CreateRequest{Language: "python"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-evs:
	case <-time.After(30 * time.Second):
		t.Errorf("no event for this installation's own sandbox")
	}
}
