package backendrpc

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// fakeOpener opens fb for any table, in the cluster "lab".
func fakeOpener(fb *fake.Backend) Opener {
	return func(_ context.Context, k config.Kubernetes) (backend.Backend, Place, error) {
		if k.Context == "dead" {
			return nil, Place{}, errors.New(`context "dead" does not answer`)
		}
		return fb, Place{Cluster: "lab", Namespace: k.Namespace}, nil
	}
}

// serve runs Serve over pipes in the test's goroutines and returns a
// client of it; the test's end closes both.
func serve(t *testing.T, fb *fake.Backend) *Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(context.Background(), inR, outW, fakeOpener(fb), slog.New(slog.DiscardHandler))
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return NewClient(outR, inW)
}

// Through the pipe, the client is the backend for what the tray and the
// window do: the cluster opened (or why not), the list, inspect, usage,
// a command's output, a path's stat, a copied tar, and remove; the calls
// that make sandboxes say what to use instead.
func TestClientCallsTheServedBackend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		fb := fake.New()
		c := serve(t, fb)
		if _, err := c.List(ctx); err == nil || !strings.Contains(err.Error(), "open first") {
			t.Errorf("List before Open: %v, want the call to open first", err)
		}
		if _, err := c.Open(ctx, config.Kubernetes{Context: "dead"}); err == nil || !strings.Contains(err.Error(), `context "dead" does not answer`) {
			t.Errorf("Open of a dead context: %v, want its error", err)
		}
		p, err := c.Open(ctx, config.Kubernetes{Namespace: "sandboxes"})
		if err != nil || p != (Place{Cluster: "lab", Namespace: "sandboxes"}) {
			t.Fatalf("Open = %+v, %v", p, err)
		}
		id := fb.Put(backend.ContainerSpec{Name: "mcp-sandbox-abc", Image: fake.DefaultImage, MemoryBytes: 256 << 20,
			Labels: map[string]string{backend.LabelManaged: "true", backend.LabelID: "abc"}})
		list, err := c.List(ctx)
		if err != nil || len(list) != 1 || list[0].ID != id || list[0].Labels[backend.LabelID] != "abc" {
			t.Fatalf("List = %+v, %v", list, err)
		}
		if in, err := c.Inspect(ctx, id); err != nil || in.MemoryBytes != 256<<20 {
			t.Errorf("Inspect = %+v, %v", in, err)
		}
		if _, err := c.Usage(ctx, id); err != nil {
			t.Errorf("Usage: %v", err)
		}
		var out bytes.Buffer
		st, err := c.Exec(ctx, id, backend.ExecSpec{Cmd: []string{"sh", "-c", "cat > /workspace/a.txt; echo wrote"}, Stdin: strings.NewReader("hello"), Stdout: &out})
		if err != nil || st.ExitCode != 0 || out.String() != "wrote\n" {
			t.Fatalf("Exec = %+v %v, output %q", st, err, out.String())
		}
		if ps, err := c.StatPath(ctx, id, "/workspace/a.txt"); err != nil || ps.Size != 5 {
			t.Errorf("StatPath = %+v, %v", ps, err)
		}
		if _, err := c.StatPath(ctx, id, "/workspace/none"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("StatPath of a missing path: %v, want fs.ErrNotExist across the pipe", err)
		}
		checkTar(t, c, id)
		if _, err := c.Create(ctx, backend.ContainerSpec{}); err == nil || !strings.Contains(err.Error(), "mcp-sandbox CLI") {
			t.Errorf("Create: %v, want it refused, naming what to use", err)
		}
		if err := c.Remove(ctx, id); err != nil {
			t.Fatal(err)
		}
		if list, err := c.List(ctx); err != nil || len(list) != 0 {
			t.Errorf("List after Remove = %+v, %v", list, err)
		}
	})
}

// checkTar copies /workspace/a.txt out and reads it.
func checkTar(t *testing.T, c *Client, id string) {
	t.Helper()
	rc, err := c.CopyFrom(context.Background(), id, "/workspace/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(rc)
	if _, err := tr.Next(); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(tr); string(b) != "hello" {
		t.Errorf("copied %q, want hello", b)
	}
}

// A call whose context ends returns at once, and the child gives it up
// (the backend sees its context cancelled); calls run side by side.
func TestCallCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fb := fake.New()
		c := serve(t, fb)
		if _, err := c.Open(context.Background(), config.Kubernetes{}); err != nil {
			t.Fatal(err)
		}
		id := fb.Put(backend.ContainerSpec{Name: "mcp-sandbox-x", Image: fake.DefaultImage})
		fb.Delay(fake.OpList, time.Hour)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.List(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("List past its deadline: %v", err)
			}
		}()
		if _, err := c.Usage(context.Background(), id); err != nil {
			t.Errorf("Usage beside a slow List: %v", err)
		}
		wg.Wait()
		synctest.Wait() // the child's List has ended: Serve's cleanup does not wait an hour
	})
}

// TestMain runs the test binary as a child serving the fake backend when
// asked to (Start's tests).
func TestMain(m *testing.M) {
	if os.Getenv("BACKENDRPC_TEST_CHILD") == "1" {
		os.Stderr.WriteString("child says hello\n")
		fb := fake.New()
		fb.Put(backend.ContainerSpec{Name: "mcp-sandbox-one", Image: fake.DefaultImage, Labels: map[string]string{backend.LabelManaged: "true", backend.LabelID: "one"}})
		if err := Serve(context.Background(), os.Stdin, os.Stdout, fakeOpener(fb), slog.New(slog.DiscardHandler)); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
