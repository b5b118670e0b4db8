//go:build cgo

package windowapp

import (
	"archive/tar"
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// pendingProposal saves a proposal that changes ~/proj/a.py, as a
// server whose client could not ask does (by: who applies it).
func pendingProposal(t *testing.T, a *App, by string) (*proposal.Proposal, string) {
	t.Helper()
	home := os.Getenv("HOME")
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "a.py"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "proj/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "proj/a.py", Typeflag: tar.TypeReg, Mode: 0o644, Size: 6})
	tw.Write([]byte("x = 2\n"))
	tw.Close()
	cfg := a.cfg.Current()
	p, err := proposal.Build(context.Background(), &buf, proposal.Request{SandboxID: "sb1", HostPath: "~/proj", Summary: "fix",
		Fence: hostcopy.Fence(cfg), ApplyRoots: cfg.Files.ApplyRootsOrRead()})
	if err != nil {
		t.Fatal(err)
	}
	p.AppliedBy = by
	if err := proposal.Save(a.st, p); err != nil {
		t.Fatal(err)
	}
	return p, filepath.Join(proj, "a.py")
}

func testApp(t *testing.T) *App {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &App{st: st, cfg: config.Static(config.Default()), log: slog.New(slog.DiscardHandler)}
}

// TestWindowAppliesPending: a proposal whose call returned pending is
// applied by the window's Apply (through the fence, with a backup) and
// recorded in the audit log; Reject writes nothing; either way it no
// longer waits.
func TestWindowAppliesPending(t *testing.T) {
	a := testApp(t)
	p, file := pendingProposal(t, a, proposal.ByWindow)
	line, err := a.decideProposal(context.Background(), p.ID, true)
	if err != nil || !strings.Contains(line, "Applied 1") {
		t.Fatalf("Apply: %q, %v", line, err)
	}
	if b, _ := os.ReadFile(file); string(b) != "x = 2\n" {
		t.Errorf("a.py %q after Apply", b)
	}
	if n := len(proposal.List(a.st, time.Now())); n != 0 {
		t.Errorf("%d proposals still wait", n)
	}
	audit, _ := a.st.ReadAudit(10)
	if len(audit) != 1 || audit[0].Tool != "propose_changes" || !strings.Contains(audit[0].Summary, "applied") {
		t.Errorf("audit %+v", audit)
	}

	p, file = pendingProposal(t, a, proposal.ByWindow)
	if line, err := a.decideProposal(context.Background(), p.ID, false); err != nil || !strings.Contains(line, "Rejected") {
		t.Errorf("Reject: %q, %v", line, err)
	}
	if b, _ := os.ReadFile(file); string(b) != "x = 1\n" {
		t.Errorf("a.py %q after Reject", b)
	}
}

// TestWindowAnswersWaitingServer: a proposal whose server waits (the
// tray put it to the person) gets the person's answer; the server, not
// the window, applies it.
func TestWindowAnswersWaitingServer(t *testing.T) {
	a := testApp(t)
	p, file := pendingProposal(t, a, proposal.ByServer)
	if _, err := a.decideProposal(context.Background(), p.ID, true); err != nil {
		t.Fatal(err)
	}
	if c, err := proposal.Decision(a.st, p, time.Now()); err != nil || c != state.ChoiceAllow {
		t.Errorf("decision %q, %v", c, err)
	}
	if b, _ := os.ReadFile(file); string(b) != "x = 1\n" {
		t.Errorf("the window wrote a.py (%q); its server applies it", b)
	}
}
