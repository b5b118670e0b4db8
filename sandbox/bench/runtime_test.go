package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// TestRuntime: Options.Runtime is the measured server's docker.runtime
// and the baselines' docker run --runtime; without it, neither is set.
func TestRuntime(t *testing.T) {
	// A docker CLI that prints its arguments, one a line.
	cli := filepath.Join(t.TempDir(), "docker")
	if err := os.WriteFile(cli, []byte("#!/bin/sh\nfor a; do echo \"$a\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		runtime string
		run     []string // the args docker run gets
	}{
		{"", []string{"run", "--rm", "img"}},
		{"runsc", []string{"run", "--runtime", "runsc", "--rm", "img"}},
	} {
		t.Run("runtime "+tc.runtime, func(t *testing.T) {
			path, err := writeConfig(t.TempDir(), Options{Image: "img", Pull: "never", Runtime: tc.runtime})
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.runtime; want != "" && cfg.Docker.Runtime != want {
				t.Errorf("docker.runtime %q, want %q", cfg.Docker.Runtime, want)
			}
			if tc.runtime == "" && cfg.Docker.Runtime != config.Default().Docker.Runtime {
				t.Errorf("docker.runtime %q, want the default", cfg.Docker.Runtime)
			}
			d := dockerCLI{path: cli, image: "img", runtime: tc.runtime}
			out, err := d.run(context.Background(), "run", "--rm", "img")
			if got := strings.Split(out, "\n"); err != nil || !slices.Equal(got, tc.run) {
				t.Errorf("docker run got %q (%v), want %q", got, err, tc.run)
			}
			out, _ = d.run(context.Background(), "exec", "c", "true")
			if out != "exec\nc\ntrue" {
				t.Errorf("docker exec got %q: only run takes --runtime", out)
			}
		})
	}
}
