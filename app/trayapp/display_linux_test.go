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

func TestNoDisplayRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool // a reason is given
	}{
		{"nothing", map[string]string{}, true},
		{"wayland", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, false},
		{"remote X", map[string]string{"DISPLAY": "otherhost:0"}, false},
		{"local X without socket", map[string]string{"DISPLAY": ":4711.0"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := noDisplay(func(k string) string { return tc.env[k] }) != ""; got != tc.want {
				t.Errorf("noDisplay(%v) gives a reason: %v, want %v", tc.env, got, tc.want)
			}
		})
	}
}
