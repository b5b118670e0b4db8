package bundled

import (
	"os"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	apptest.Cleanup()
	os.Exit(code)
}
