package autostart

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchAgentGoesWithTheApp reads the LaunchAgent with a real plist
// parser (Python's plistlib) and runs its ProgramArguments as launchd
// would, with /bin/sh and a stand-in launchctl: while the app is there the
// tray starts with --hidden; once it is gone (dragged to the Trash) the
// agent removes its plist and boots itself out, and starts nothing.
func TestLaunchAgentGoesWithTheApp(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh here to run the agent's script with")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 (plistlib) is not installed")
	}
	dir := t.TempDir()
	app := filepath.Join(dir, `MCP "Sandbox" $x.app`)
	exe := filepath.Join(app, "Contents", "MacOS", "mcp-sandbox-tray")
	ran := filepath.Join(dir, "ran")
	writeExe(t, exe, "#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\" >"+shQuote(ran)+"\n")
	plist := filepath.Join(dir, "LaunchAgents", agentLabel+".plist")
	if err := os.MkdirAll(filepath.Dir(plist), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plist, launchAgentPlist(exe, plist), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", "-c", "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))", plist).CombinedOutput()
	if err != nil {
		t.Fatalf("plistlib: %v\n%s", err, out)
	}
	var agent struct {
		Label, AssociatedBundleIdentifiers, ProcessType string
		ProgramArguments                                []string
		RunAtLoad                                       bool
	}
	if err := json.Unmarshal(out, &agent); err != nil {
		t.Fatal(err)
	}
	args := agent.ProgramArguments
	if agent.Label != agentLabel || agent.AssociatedBundleIdentifiers != agentLabel || !agent.RunAtLoad ||
		len(args) != 7 || args[0] != "/bin/sh" || args[5] != exe || args[6] != HiddenFlag {
		t.Fatalf("agent = %+v", agent)
	}
	bin := filepath.Join(dir, "bin")
	calls := filepath.Join(dir, "launchctl-calls")
	writeExe(t, filepath.Join(bin, "launchctl"), "#!/bin/sh\necho \"$@\" >>"+shQuote(calls)+"\n")
	login := func() {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("login: %v\n%s", err, out)
		}
	}

	login()
	if b, err := os.ReadFile(ran); err != nil || string(b) != exe+"\n"+HiddenFlag+"\n" {
		t.Errorf("the tray was not started as %q --hidden: %q, %v", exe, b, err)
	}
	if _, err := os.Stat(plist); err != nil || fileExists(calls) {
		t.Errorf("with the app there, the agent changed itself: plist %v, launchctl called: %v", err, fileExists(calls))
	}

	// The app goes to the Trash.
	if err := os.Rename(app, filepath.Join(dir, "Trash.app")); err != nil {
		t.Fatal(err)
	}
	os.Remove(ran)
	login()
	if fileExists(ran) {
		t.Error("the tray started from the Trash")
	}
	if fileExists(plist) {
		t.Error("the LaunchAgent stayed after the app was gone")
	}
	uid := strings.TrimSpace(mustOutput(t, "id", "-u"))
	if b, _ := os.ReadFile(calls); string(b) != "bootout gui/"+uid+"/"+agentLabel+"\n" {
		t.Errorf("launchctl calls: %q", b)
	}
}

func writeExe(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func mustOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
