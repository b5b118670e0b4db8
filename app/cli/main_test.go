package cli

import (
	"os"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
)

// TestMain removes the binaries the tests built (clitest.Binary).
func TestMain(m *testing.M) {
	code := m.Run()
	clitest.Cleanup()
	os.Exit(code)
}
