package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// peerSave is the window's Save to (windowapp's detailsActions) on a
// sandbox of an engine over the in-memory backend: sandbox.OpenPeer and
// copy_out's fence, onto real files below root.
func peerSave(t *testing.T, root, denied string) (DetailsActions, string) {
	t.Helper()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
	cfg.Images.Pull = "never"
	cfg.Pool.Size = 0
	cfg.Files.WriteRoot, cfg.Files.WriteDeny = root, []string{denied}
	be := fake.New()
	eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: config.Static(cfg), State: st, OwnerID: "ui-test"})
	t.Cleanup(func() { eng.Close(context.Background()) })
	ctx := context.Background()
	sb, err := eng.Create(ctx, sandbox.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "echo new > /workspace/report.txt"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("write the sandbox's file: %v %+v", err, res)
	}
	return DetailsActions{
		Save: func(ctx context.Context, id, src, dest string, overwrite bool) (sandbox.CopyOutResult, error) {
			p, err := sandbox.OpenPeer(ctx, be, st, cfg, nil, id)
			if err != nil {
				return sandbox.CopyOutResult{}, err
			}
			return p.CopyOut(ctx, sandbox.CopyOutRequest{Path: src, HostPath: dest, Overwrite: overwrite})
		},
	}, sb.ID
}

// topButtons are the visible buttons of win's top overlay, by text.
func topButtons(win fyne.Window) map[string]*widget.Button {
	btns := map[string]*widget.Button{}
	if top := win.Canvas().Overlays().Top(); top != nil {
		walk(top, func(o any) {
			if b, ok := o.(*widget.Button); ok && b.Visible() {
				btns[b.Text] = b
			}
		})
	}
	return btns
}

// TestDetailsSaveAsksToReplace: Save to onto an existing file asks, with
// the verb on the button, and replaces the file only when told to, through
// copy_out's fence; Cancel leaves it; a denied file is refused outright,
// with no offer to replace it.
func TestDetailsSaveAsksToReplace(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, "saved")
	denied := filepath.Join(root, "denied")
	if err := os.MkdirAll(denied, 0o700); err != nil {
		t.Fatal(err)
	}
	act, id := peerSave(t, root, denied)
	w, _ := newWindow(t)
	w.Sandboxes.act.Details = act
	w.Sandboxes.Set(sandboxwatch.Snapshot{Rows: []sandboxwatch.Row{{Info: inventory.Info{ID: id, Language: "python", State: "running", CreatedAt: now}}}, Updated: now})
	d := w.Sandboxes.OpenDetails(id)
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return string(b)
	}

	dest := filepath.Join(root, "report.txt")
	if err := os.WriteFile(dest, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.SaveTo("/workspace/report.txt", dest)
	btns := topButtons(d.Window())
	if btns["Replace"] == nil || btns["Cancel"] == nil {
		t.Fatalf("an existing destination did not ask to replace it: buttons %v, dialog %q", btns, overlayText(d.Window().Canvas().Overlays().Top()))
	}
	if text := overlayText(d.Window().Canvas().Overlays().Top()); !strings.Contains(text, dest+" already exists. Replacing it removes the file report.txt (4 bytes)") || strings.Contains(text, "folder") {
		t.Errorf("the question does not say exactly what a replace removes: %q", text)
	}
	test.Tap(btns["Cancel"])
	if got := read(dest); got != "old\n" {
		t.Fatalf("Cancel changed the file: %q", got)
	}

	d.SaveTo("/workspace/report.txt", dest)
	test.Tap(topButtons(d.Window())["Replace"])
	if got := read(dest); got != "new\n" {
		t.Errorf("Replace left %q", got)
	}
	if text := overlayText(d.Window().Canvas().Overlays().Top()); !strings.Contains(text, "Saved 1 file") {
		t.Errorf("no word that it was saved: %q", text)
	}

	// A denied file: refused by the fence, never offered for replacing.
	keep := filepath.Join(denied, "report.txt")
	if err := os.WriteFile(keep, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.SaveTo("/workspace/report.txt", keep)
	if btns := topButtons(d.Window()); btns["Replace"] != nil {
		t.Error("a file in write_deny was offered for replacing")
	}
	if text := overlayText(d.Window().Canvas().Overlays().Top()); !strings.Contains(text, "write_deny") && !strings.Contains(text, "denied") {
		t.Errorf("the refusal does not say why: %q", text)
	}
	if got := read(keep); got != "keep\n" {
		t.Errorf("the denied file changed: %q", got)
	}
}

// A replace question says what is there now: a file by its size, a
// folder by how many files it holds.
func TestReplacedSaysWhatGoes(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "report.csv"), "a,b\n1,2\n3,4\n")
	write(filepath.Join(dir, "out", "a.txt"), "a")
	write(filepath.Join(dir, "out", "sub", "b.txt"), "bb")
	if err := os.Mkdir(filepath.Join(dir, "none"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"report.csv": "the file report.csv (12 bytes)",
		"out":        "the folder out with 2 files (3 bytes) in it",
		"none":       "the empty folder none",
	} {
		if got := replaced(filepath.Join(dir, name)); got != want {
			t.Errorf("replaced(%s) = %q, want %q", name, got, want)
		}
	}
}

// Save to… opens in files.write_root ("~" is the home folder), made if
// missing, so that its first choice is inside copy_out's fence.
func TestSaveStartsInWriteRoot(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	u, err := saveStart("~/Downloads/mcp-sandbox")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(home, "Downloads", "mcp-sandbox")
	if u.Path() != want {
		t.Errorf("Save to… opens at %s, want %s", u.Path(), want)
	}
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
		t.Errorf("the write root was not made: %v", err)
	}
}
