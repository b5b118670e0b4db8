package autostart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestXDGEntry(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	exe := `/opt/MCP Sandbox/bin/mcp-sandbox-tray`
	if on, err := Enabled(); err != nil || on {
		t.Fatalf("Enabled before = %v, %v; want off by default", on, err)
	}
	if err := Set(true, exe); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(cfg, "autostart", "mcp-sandbox-tray.desktop")
	if Location() != p {
		t.Errorf("Location = %q, want %q", Location(), p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Exec=\"/opt/MCP Sandbox/bin/mcp-sandbox-tray\" --hidden\n",
		// Removed with the program, the entry is skipped, not run.
		"TryExec=/opt/MCP Sandbox/bin/mcp-sandbox-tray\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("entry lacks %q:\n%s", want, data)
		}
	}
	if on, err := Enabled(); err != nil || !on {
		t.Fatalf("Enabled after Set(true) = %v, %v", on, err)
	}
	if v, err := exec.LookPath("desktop-file-validate"); err == nil {
		if out, err := exec.Command(v, p).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("desktop-file-validate: %v\n%s", err, out)
		}
	}
	if err := Set(false, ""); err != nil {
		t.Fatal(err)
	}
	if on, _ := Enabled(); on {
		t.Error("still enabled after Set(false)")
	}
	if err := Set(false, ""); err != nil {
		t.Errorf("Set(false) twice: %v", err)
	}
}

func TestXDGEntryTurnedOffByTheDesktop(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	p := filepath.Join(cfg, "autostart", "mcp-sandbox-tray.desktop")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("[Desktop Entry]\nType=Application\nExec=x\nHidden=true\n"), 0o644)
	if on, err := Enabled(); err != nil || on {
		t.Errorf("Enabled with Hidden=true = %v, %v; want off", on, err)
	}
}

func TestExecArg(t *testing.T) {
	tests := map[string]string{
		"/usr/bin/tray": `"/usr/bin/tray"`,
		`/a "b"/c`:      `"/a \\"b\\"/c"`,
		`/x$y/100%`:     `"/x\\$y/100%%"`,
		`/back\slash`:   `"/back\\\\slash"`,
	}
	for in, want := range tests {
		if got := execArg(in); got != want {
			t.Errorf("execArg(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestStringValue(t *testing.T) {
	for in, want := range map[string]string{
		"/opt/MCP Sandbox/tray": "/opt/MCP Sandbox/tray",
		`C:\x\tray`:             `C:\\x\\tray`,
		"/a\nb":                 `/a\nb`,
	} {
		if got := stringValue(in); got != want {
			t.Errorf("stringValue(%q) = %q, want %q", in, got, want)
		}
	}
}
