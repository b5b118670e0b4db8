package fake_test

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/backendtest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
)

// TestConformance runs the backend conformance suite on the fake, so that
// it cannot drift from what a real backend does.
func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return fake.New() },
		backendtest.Options{Image: fake.DefaultImage})
}

// TestNotInBinaries holds that the fake (and the shell interpreter it runs
// scripts with) is test support only: no shipped program links it.
func TestNotInBinaries(t *testing.T) {
	const module = "github.com/mcp-sandbox/mcp-sandbox"
	cmd := exec.Command("go", "list", "-deps", module+"/cmd/...")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1") // the window is cgo-only
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"/sandbox") {
		t.Fatalf("go list -deps of the programs lacks the engine: %q", deps)
	}
	for _, bad := range []string{module + "/sandbox/backend/fake", "mvdan.cc/sh/v3/interp"} {
		if slices.Contains(deps, bad) {
			t.Errorf("a shipped program links %s", bad)
		}
	}
}

func create(t *testing.T, be *fake.Backend) string {
	t.Helper()
	id, err := be.Create(t.Context(), backend.ContainerSpec{Name: backend.NamePrefix + "t1", Image: fake.DefaultImage,
		Labels: map[string]string{backend.LabelManaged: "true", backend.LabelID: "t1"}, User: "1000:1000"})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A script that leaves a large stdin unread ends, and so does the goroutine
// feeding it (synctest.Test waits for every goroutine of the bubble).
func TestUnreadStdinEndsWithTheProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		be := fake.New()
		id := create(t, be)
		var out strings.Builder
		st, err := be.Exec(t.Context(), id, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", "echo hi"},
			Stdin: strings.NewReader(strings.Repeat("x", 1<<20)), Stdout: &out})
		if err != nil || st.ExitCode != 0 || out.String() != "hi\n" {
			t.Errorf("exec = %+v, %v, %q", st, err, out.String())
		}
		if err := be.Remove(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	})
}

// The faults a test injects are the ones the engine sees.
func TestFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		be := fake.New()
		boom := errors.New("boom")
		be.Fail(fake.OpCreate, 1, boom)
		if _, err := be.Create(t.Context(), backend.ContainerSpec{Image: fake.DefaultImage}); !errors.Is(err, boom) {
			t.Errorf("Create with a fault = %v", err)
		}
		id := create(t, be)
		be.SetGone(true)
		if _, err := be.List(t.Context()); !errors.Is(err, backend.ErrDockerUnreachable) {
			t.Errorf("List with the engine gone = %v", err)
		}
		be.Heal()

		// A sleep ends on the bubble's clock.
		start := time.Now()
		if st, err := be.Exec(t.Context(), id, backend.ExecSpec{Cmd: []string{"sleep", "90"}}); err != nil || st.ExitCode != 0 {
			t.Errorf("sleep = %+v, %v", st, err)
		}
		if d := time.Since(start); d != 90*time.Second {
			t.Errorf("sleep 90 took %v on the clock", d)
		}

		// Exit from outside ends what waits on the container.
		waited := make(chan backend.ContainerExit, 1)
		go func() {
			ex, _ := be.WaitExit(t.Context(), id)
			waited <- ex
		}()
		synctest.Wait()
		be.Exit(id, backend.ContainerExit{ExitCode: 137, OOMKilled: true})
		if ex := <-waited; !ex.OOMKilled {
			t.Errorf("WaitExit after an OOM kill = %+v", ex)
		}
		be.Vanish(id)
		if ex, err := be.WaitExit(t.Context(), id); err != nil || !ex.Removed {
			t.Errorf("WaitExit after Vanish = %+v, %v", ex, err)
		}
		if len(be.Containers()) != 0 {
			t.Errorf("left: %+v", be.Containers())
		}
	})
}
