package sandbox_test

import (
	"path"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// FuzzResolvePath: a path from a tool call resolves to /workspace, /tmp or
// below them, clean, or is refused.
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"", "a", "/workspace/../etc/passwd", "../../tmp/../etc", "/tmp", "/tmpx", "//workspace//a/./b/..", "a/\x00b", "/workspace\n/etc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := sandbox.ResolvePath(p)
		if err != nil {
			return
		}
		if got != path.Clean(got) {
			t.Fatalf("%q resolved to %q, which is not clean", p, got)
		}
		if got != backend.Workspace && !strings.HasPrefix(got, backend.Workspace+"/") && got != "/tmp" && !strings.HasPrefix(got, "/tmp/") {
			t.Fatalf("%q resolved to %q, outside /workspace and /tmp", p, got)
		}
		if strings.ContainsAny(got, "\x00\n\r") {
			t.Fatalf("%q resolved to %q, which holds a NUL or line break", p, got)
		}
	})
}
