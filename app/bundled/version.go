package bundled

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/childproc"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
)

// Version asks the server binary at path for its build information
// (`mcp-sandbox version --json`).
func Version(ctx context.Context, path string) (buildinfo.Info, error) {
	var info buildinfo.Info
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version", "--json")
	childproc.NoWindow(cmd)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return info, fmt.Errorf("%s version: %w %s", path, err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return info, fmt.Errorf("%s version: %w", path, err)
	}
	return info, nil
}
