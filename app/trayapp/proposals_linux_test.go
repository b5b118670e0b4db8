package trayapp

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// pendAsServer leaves a proposal that changes ~/proj/a.py waiting for
// the window, as a server whose client could not ask does, and returns
// the file.
func pendAsServer(t *testing.T, home string, st *state.Store) string {
	t.Helper()
	t.Setenv("HOME", home) // the fence's ~ is the tray's
	file := filepath.Join(home, "proj", "a.py")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("def add(a, b):\n    return a - b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	body := "def add(a, b):\n    return a + b\n"
	tw.WriteHeader(&tar.Header{Name: "proj/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "proj/a.py", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))})
	tw.Write([]byte(body))
	tw.Close()
	cfg := config.Default()
	p, err := proposal.Build(context.Background(), &buf, proposal.Request{SandboxID: "3f2a9c01deadbeef", HostPath: "~/proj",
		Summary: "fix add", Fence: hostcopy.Fence(cfg), ApplyRoots: cfg.Files.ApplyRootsOrRead()})
	if err != nil {
		t.Fatal(err)
	}
	p.AppliedBy = proposal.ByWindow
	if err := proposal.Save(st, p); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestChangesReviewedInWindow: a proposal left pending (no client could
// ask) is a notification and the tray's "1 change waiting for review";
// that item opens the window on the Changes tab, which shows its diff,
// and Apply there writes the file, with a backup, and records it in the
// audit log.
func TestChangesReviewedInWindow(t *testing.T) {
	skipUnderRace(t)
	needXdotool(t)
	d := startDesktop(t)
	p, m := d.startTray(t, nil, "--hidden")
	st, err := state.Open(filepath.Join(p.home, ".local", "state", "mcp-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	file := pendAsServer(t, p.home, st)
	label := traymenu.LabelProposals(1)
	if _, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		for _, it := range items {
			if it.Label == label && it.Visible {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("the menu never said %q: %v", label, err)
	}
	d.waitNote(t, "the proposal's notification", "proposes 1 file change(s)", "fix add")
	click(t, m, label)
	windowShown(t, p, "changes-review")
	waitFor(t, "the window on the Changes tab", 20*time.Second, func() bool { return p.windowTab() == ui.TabChanges })
	// Apply is the card's first button, at its left; the card's text
	// above it takes no clicks.
	for y := 60; y < 360; y += 6 {
		if b, _ := os.ReadFile(file); strings.Contains(string(b), "a + b") {
			break
		}
		p.clickAt(45, y)
		time.Sleep(150 * time.Millisecond)
	}
	waitFor(t, "Apply to write the file", 10*time.Second, func() bool {
		b, _ := os.ReadFile(file)
		return strings.Contains(string(b), "a + b")
	})
	windowShown(t, p, "changes-applied")
	if n := len(proposal.List(st, time.Now())); n != 0 {
		t.Errorf("%d proposals still wait after Apply", n)
	}
	backups, _ := filepath.Glob(filepath.Join(proposal.BackupDir(st.Dir()), "*", "a.py*"))
	if len(backups) != 1 {
		t.Errorf("backups %v, want one of a.py", backups)
	}
	audit, _ := st.ReadAudit(20)
	found := false
	for _, e := range audit {
		found = found || e.Tool == "propose_changes" && strings.HasPrefix(e.Summary, "applied")
	}
	if !found {
		t.Errorf("the audit log has no applied proposal: %+v", audit)
	}
	if _, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		for _, it := range items {
			if it.Label == label && it.Visible {
				return false
			}
		}
		return true
	}); err != nil {
		t.Errorf("the menu still offers the applied change: %v", err)
	}
	p.stop(t) // and the window it opened
	waitFor(t, "the window to end with the tray", 20*time.Second, func() bool { return len(windowChildren(t, p.pid)) == 0 })
}
