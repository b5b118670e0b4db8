package fake_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

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
	out, err := exec.Command("go", "list", "-deps", module+"/cmd/...").Output()
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
