package clientconfig

import (
	"io/fs"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/filebackup"
)

// now is the clock backups are named by; tests set it.
var now = time.Now

// backup copies data, the file's current content, beside it with the
// file's mode (sandbox/filebackup names and prunes backups the same way
// for every file MCP Sandbox changes), and returns its path.
func backup(file string, data []byte, perm fs.FileMode) (string, error) {
	return filebackup.Create(file, data, perm, now())
}
