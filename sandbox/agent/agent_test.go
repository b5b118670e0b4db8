package agent

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent/internal/buildbin"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestBinariesReproducible rebuilds the agent and checks that the
// committed binaries are exactly what the source gives, so prebuilt/ can never
// drift from cmd/mcp-sandbox-agent. The bytes depend on the Go release:
// prebuilt/GOVERSION says which one made them.
func TestBinariesReproducible(t *testing.T) {
	testenv.NeedBinaries(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	want, err := os.ReadFile("prebuilt/GOVERSION")
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(want)); v != runtime.Version() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("prebuilt/ was built with %s, this is %s: run go generate ./sandbox/agent", v, runtime.Version())
		}
		t.Skipf("prebuilt/ was built with %s, this is %s", v, runtime.Version())
	}
	for _, arch := range buildbin.Arches {
		got, err := buildbin.Build(arch)
		if err != nil {
			t.Fatal(err)
		}
		gz, err := buildbin.Compress(got)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gz, Compressed(arch)) {
			t.Errorf("%s: the committed agent differs from a fresh build of cmd/mcp-sandbox-agent; run go generate ./sandbox/agent", buildbin.File(arch))
		}
		// And what the server copies into a sandbox is that build.
		r := Open(arch)
		if r == nil {
			t.Fatalf("no agent for %s", arch)
		}
		copied, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(copied, got) {
			t.Errorf("%s: Open gives %d bytes (%v), not the fresh build's %d", arch, len(copied), err, len(got))
		}
	}
}

// The engine may close the agent while its stdin copy still reads it (an
// exec that gave up): under -race, this is where a data race would show.
func TestOpenCloseWhileReading(t *testing.T) {
	for range 20 {
		r := Open(runtime.GOARCH)
		if r == nil {
			t.Skipf("no agent for %s", runtime.GOARCH)
		}
		done := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, r)
			done <- err
		}()
		r.Close()
		if err := <-done; err != nil && err != io.ErrClosedPipe {
			t.Fatalf("read after close: %v", err)
		}
		if _, err := r.Read(make([]byte, 1)); err != io.ErrClosedPipe {
			t.Fatalf("read after close = %v, want io.ErrClosedPipe", err)
		}
	}
}
