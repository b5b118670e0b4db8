package backend_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBackendsDoNotImportTheEngine holds the boundary: a backend imports
// the contract, never the engine (as a database driver imports
// database/sql/driver, not database/sql).
func TestBackendsDoNotImportTheEngine(t *testing.T) {
	const engine = "github.com/mcp-sandbox/mcp-sandbox/sandbox"
	for _, pkg := range []string{engine + "/backend", engine + "/docker"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		if slices.Contains(strings.Fields(string(out)), engine) {
			t.Errorf("%s imports the engine package %s", pkg, engine)
		}
	}
}
