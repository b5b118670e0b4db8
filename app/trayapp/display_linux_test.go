package trayapp

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
)

// Without a display the real tray binary says so in one line and exits
// non-zero, instead of panicking in GLFW.
func TestNoDisplayOneLine(t *testing.T) {
	bin := apptest.Binary(t, "mcp-sandbox-tray")
	for _, tc := range []struct{ name, display string }{
		{"unset", ""},
		{"no server there", ":97"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "DISPLAY=" + tc.display}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("exit: %v, want a non-zero exit; output:\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "no display") {
				t.Errorf("output is not one line saying there is no display:\n%s", out)
			}
		})
	}
}
