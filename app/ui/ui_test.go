package ui

import (
	"context"
	"errors"
	"flag"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) {
	time.Local = time.UTC // golden files show times
	flag.Parse()
	os.Exit(m.Run())
}

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// fakes records what the window asked for.
type fakes struct {
	stopped  []string
	stopAll  int
	clients  []ClientRow
	verbs    []string
	saved    *config.Config
	saveErr  error
	audit    []state.AuditEntry
	testErr  error
	detected int
}

func (f *fakes) actions() Actions {
	return Actions{
		Status: StatusActions{
			Test: func(ctx context.Context) (bundled.TestResult, error) {
				return bundled.TestResult{Output: "hello\n", RoundTrip: 486 * time.Millisecond, Startup: 27 * time.Millisecond, ServerVersion: "1.0.0"}, f.testErr
			},
			Detect: func() { f.detected++ },
		},
		Sandboxes: SandboxActions{
			Stop:    func(ctx context.Context, id string) error { f.stopped = append(f.stopped, id); return nil },
			StopAll: func(ctx context.Context) error { f.stopAll++; return nil },
		},
		Clients: ClientActions{
			List: func(ctx context.Context) []ClientRow { return f.clients },
			Configure: func(ctx context.Context, name string) (string, error) {
				f.verbs = append(f.verbs, "configure "+name)
				return "Configured " + name + ". Restart it to load it.", nil
			},
			Remove: func(ctx context.Context, name string) (string, error) {
				f.verbs = append(f.verbs, "remove "+name)
				return "Removed.", nil
			},
			Verify: func(ctx context.Context, name string) (string, error) {
				f.verbs = append(f.verbs, "verify "+name)
				return "", errors.New("server exited with status 1")
			},
		},
		Settings: SettingsActions{
			Load: func() (*config.Config, error) {
				c := config.Default()
				c.Source = "/home/me/.config/mcp-sandbox/config.toml"
				return c, nil
			},
			Save: func(ctx context.Context, c *config.Config) (string, error) {
				if f.saveErr != nil {
					return "", f.saveErr
				}
				f.saved = c
				return "Saved; the old file is config.toml.20260501-120000.bak.", nil
			},
		},
		Activity: ActivityActions{Read: func(limit int) ([]state.AuditEntry, error) { return f.audit, nil }},
	}
}

// lightTheme is the default theme in its light variant, whatever the
// machine prefers, so golden images do not depend on it.
type lightTheme struct{ fyne.Theme }

func (l lightTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return l.Theme.Color(n, theme.VariantLight)
}

// newWindow returns the window over fakes in a headless app, at the size a
// person sees it, with actions run inline.
func newWindow(t *testing.T) (*Window, *fakes) {
	t.Helper()
	a := test.NewTempApp(t)
	a.Settings().SetTheme(lightTheme{theme.DefaultTheme()})
	f := &fakes{}
	w := New(a, Options{Actions: f.actions(), Now: func() time.Time { return now }, Go: func(g func()) { g() }})
	w.Window().Resize(fyne.NewSize(1120, 700))
	t.Cleanup(w.Close)
	return w, f
}

// golden compares the window with testdata/NAME.xml (markup) and
// testdata/NAME.png (pixels); -update rewrites both.
func golden(t *testing.T, w *Window, name string) {
	t.Helper()
	c := w.Window().Canvas()
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", name+".xml"), []byte(test.RenderToMarkup(c)), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join("testdata", name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := png.Encode(f, c.Capture()); err != nil {
			t.Fatal(err)
		}
		t.Log("golden files rewritten")
		return
	}
	test.AssertRendersToMarkup(t, name+".xml", c)
	test.AssertRendersToImage(t, name+".png", c)
}

func statusInfo() StatusInfo {
	res := &dockerhost.Result{
		Candidates: []dockerhost.Candidate{
			{Host: "unix:///home/me/.colima/default/docker.sock", Source: "Colima (profile default)", OK: true, Engine: "Colima", Version: "27.4.0", OS: "linux/arm64", APIVersion: "1.47"},
			{Host: "unix:///var/run/docker.sock", Source: "default socket", Error: "permission denied"},
			{Host: "unix:///home/me/.docker/run/docker.sock", Source: "Docker Desktop", Missing: true, Error: "nothing at /home/me/.docker/run/docker.sock"},
		},
		Reason: "neither DOCKER_HOST nor a docker context is set; Colima (profile default) (unix:///home/me/.colima/default/docker.sock) is the first known place that answered (Colima 27.4.0)",
	}
	res.Chosen = &res.Candidates[0]
	return StatusInfo{
		Docker: res, Runtime: "runc (the engine's default); gVisor is not registered",
		Server:        bundled.Server{Path: "/opt/mcp-sandbox/mcp-sandbox", Source: "next to the tray"},
		ServerVersion: "1.0.0 (abc123, linux/amd64, go1.26.8)",
		HTTP:          HTTPInfo{Enabled: true, URL: "http://127.0.0.1:8765/mcp", Token: "0123456789abcdef0123456789abcdef", State: "running"},
		Sandboxes:     2,
	}
}

func TestStatusTab(t *testing.T) {
	w, _ := newWindow(t)
	w.Status.Set(statusInfo())
	test.Tap(w.Status.testBtn)
	if got := w.Status.testOut.Text; !strings.Contains(got, `"hello" in 486 ms`) {
		t.Errorf("test result = %q", got)
	}
	golden(t, w, "status")
}

func TestStatusTabNoDocker(t *testing.T) {
	w, f := newWindow(t)
	info := statusInfo()
	info.Docker = &dockerhost.Result{
		Candidates: []dockerhost.Candidate{{Host: "unix:///var/run/docker.sock", Source: "default socket", Error: "connection refused"}},
		Reason:     "neither DOCKER_HOST nor a docker context is set, and no known place answered",
		Hint:       "Start Docker (`sudo systemctl start docker`), Docker Desktop, or `colima start`. Tried: /var/run/docker.sock.",
	}
	info.HTTP = HTTPInfo{}
	info.Sandboxes = 0
	f.testErr = &bundled.ToolError{Tool: "run_code", Message: "Docker is not reachable"}
	w.Status.Set(info)
	test.Tap(w.Status.testBtn)
	if got := w.Status.testOut.Text; !strings.Contains(got, "Failed: run_code: Docker is not reachable") {
		t.Errorf("test result = %q", got)
	}
	if !strings.HasPrefix(w.Status.headline.Text, "Docker not found") {
		t.Errorf("headline = %q", w.Status.headline.Text)
	}
	golden(t, w, "status-no-docker")
}

func sandboxRows() sandboxwatch.Snapshot {
	mk := func(id, client, lang, image string, age, expires time.Duration, mem uint64, cpu float64, pids uint64) sandboxwatch.Row {
		return sandboxwatch.Row{
			Info: inventory.Info{
				ID: id, Client: client, Language: lang, Image: image, State: "running", Network: "none",
				CreatedAt: now.Add(-age), ExpiresAt: now.Add(expires), ContainerID: "c" + id,
				Limits: inventory.Limits{MemoryMB: 512, CPUs: 1, Pids: 256, ExecTimeoutSeconds: 60},
				Usage:  backend.Usage{MemoryBytes: mem, CPUPercent: cpu, Pids: pids},
			},
			Sampled: now,
		}
	}
	return sandboxwatch.Snapshot{Rows: []sandboxwatch.Row{
		mk("k3j5q2m7x4ab", "claude-ai", "python", "python:3.12-slim-bookworm", 42*time.Minute, 18*time.Minute, 41<<20, 0.4, 3),
		mk("p9d2r8w3n6cd", "cursor-vscode", "javascript", "node:22-bookworm-slim", 3*time.Minute, 27*time.Minute, 96<<20, 88.2, 11),
	}}
}

func TestSandboxesTab(t *testing.T) {
	w, f := newWindow(t)
	w.SelectTab(TabSandboxes)
	w.Sandboxes.Set(sandboxRows())
	golden(t, w, "sandboxes")

	if got := w.Sandboxes.Cell(1, "Memory"); got != "96 MB / 512 MB" {
		t.Errorf("memory cell = %q", got)
	}
	if got := w.Sandboxes.Cell(0, "Timeout"); got != "timeout 60 s" {
		t.Errorf("timeout cell = %q", got)
	}
	w.Sandboxes.TapStop("p9d2r8w3n6cd")
	test.Tap(dialogButtons(t, w)["Stop sandbox"])
	if strings.Join(f.stopped, ",") != "p9d2r8w3n6cd" {
		t.Errorf("stopped %v", f.stopped)
	}
	w.Sandboxes.StopAll()
	if f.stopAll != 1 {
		t.Errorf("StopAll called %d times", f.stopAll)
	}
}

func TestSandboxesTabEmpty(t *testing.T) {
	w, _ := newWindow(t)
	w.SelectTab(TabSandboxes)
	w.Sandboxes.Set(sandboxwatch.Snapshot{Err: errors.New("Docker is not reachable at unix:///var/run/docker.sock")})
	if w.Sandboxes.stopAll.Disabled() == false {
		t.Error("Stop all enabled with nothing to stop")
	}
	golden(t, w, "sandboxes-empty")
}

func TestClientsTab(t *testing.T) {
	w, f := newWindow(t)
	f.clients = []ClientRow{
		{Name: "claude", Display: "Claude Desktop", Installed: true, Configured: true, Matches: true,
			Path: "/home/me/.config/Claude/claude_desktop_config.json", LastBackup: "/home/me/.config/Claude/claude_desktop_config.json.20260501-115900.bak"},
		{Name: "cursor", Display: "Cursor", Installed: true, Configured: true, Path: "/home/me/.cursor/mcp.json"},
		{Name: "vscode", Display: "VS Code", Installed: true, Path: "/home/me/.config/Code/User/mcp.json"},
		{Name: "zed", Display: "Zed", Path: "/home/me/.config/zed/settings.json"},
	}
	w.Show()
	w.SelectTab(TabClients) // reloads the list
	if len(w.Clients.Rows()) != 4 {
		t.Fatalf("rows = %v", w.Clients.Rows())
	}
	golden(t, w, "clients")

	w.Clients.Tap("cursor", "configure")
	if msg := w.Clients.Message(); !strings.Contains(msg, "Configured cursor") {
		t.Errorf("message = %q", msg)
	}
	w.Clients.Tap("claude", "verify")
	if msg := w.Clients.Message(); msg != "Claude Desktop: server exited with status 1" {
		t.Errorf("message = %q", msg)
	}
	if strings.Join(f.verbs, ",") != "configure cursor,verify claude" {
		t.Errorf("actions %v", f.verbs)
	}
	if got := w.Clients.cell(1, 0); got != "Cursor\ninstalled\nneeds repair" {
		t.Errorf("cursor client cell = %q", got)
	}
}

func TestSettingsTab(t *testing.T) {
	w, f := newWindow(t)
	w.Settings.Reload()
	w.SelectTab(TabSettings)
	golden(t, w, "settings")

	w.Settings.Set("limits.max_sandboxes", func(c *config.Config) { c.Limits.MaxSandboxes = 4 })
	w.Settings.Set("tray.autostart", func(c *config.Config) { c.Tray.Autostart = true })
	w.Settings.Save()
	if f.saved == nil || f.saved.Limits.MaxSandboxes != 4 || !f.saved.Tray.Autostart || f.saved.Limits.MemoryMB != 512 {
		t.Fatalf("saved %+v", f.saved)
	}
	if msg := w.Settings.Message(); !strings.HasPrefix(msg, "Saved") {
		t.Errorf("message = %q", msg)
	}

	f.saveErr = errors.New("config.toml:9: limits.pids: must be between 8 and 65536")
	w.Settings.Save()
	if msg := w.Settings.Message(); msg != "Not saved: "+f.saveErr.Error() {
		t.Errorf("message = %q", msg)
	}
}

func TestSettingsRejectsMalformedNumbers(t *testing.T) {
	w, f := newWindow(t)
	w.Settings.Reload()
	// Type a word where a number goes.
	e := w.Settings.entries["limits.memory_mb"]
	e.SetText("lots")
	if e.Validate() == nil {
		t.Error("the entry accepts a word")
	}
	w.Settings.Save()
	if f.saved != nil || !strings.Contains(w.Settings.Message(), `limits.memory_mb: "lots" is not a whole number`) {
		t.Errorf("saved %v, message %q", f.saved, w.Settings.Message())
	}
}

func TestActivityTab(t *testing.T) {
	w, f := newWindow(t)
	code0, code1 := 0, 1
	f.audit = []state.AuditEntry{
		{Time: now.Add(-time.Minute), Client: "claude-ai", Tool: "run_code", SandboxID: "k3j5q2m7x4ab", Summary: `print("hello")`, ExitCode: &code0, DurationMS: 486},
		{Time: now.Add(-5 * time.Minute), Client: "cursor-vscode", Tool: "sandbox_exec", SandboxID: "p9d2r8w3n6cd", Summary: "npm test", ExitCode: &code1, DurationMS: 12400},
		{Time: now.Add(-9 * time.Minute), Client: "claude-ai", Tool: "sandbox_create", Summary: "MCP Sandbox is paused from its tray; choose Start in the tray menu to resume", Error: true, DurationMS: 3},
	}
	w.Show()
	w.SelectTab(TabActivity) // reloads the log
	if len(w.Activity.Shown()) != 3 {
		t.Fatalf("shown %d entries", len(w.Activity.Shown()))
	}
	golden(t, w, "activity")

	w.Activity.SetFilter("cursor")
	if got := w.Activity.Shown(); len(got) != 1 || got[0].Tool != "sandbox_exec" {
		t.Errorf("filter cursor shows %v", got)
	}
	w.Activity.SetFilter("")
	w.Activity.errsOnly.SetChecked(true)
	if got := w.Activity.Shown(); len(got) != 2 {
		t.Errorf("errors only shows %d entries, want 2", len(got))
	}
}

func TestViewChanges(t *testing.T) {
	a := test.NewTempApp(t)
	var seen []string
	w := New(a, Options{OnViewChange: func(tab string, visible bool) {
		seen = append(seen, tab+map[bool]string{true: "+", false: "-"}[visible])
	}, Go: func(g func()) { g() }})
	defer w.Close()
	w.Show()
	w.SelectTab(TabSandboxes)
	w.Hide()
	if got := strings.Join(seen, " "); got != "Status+ Sandboxes+ Sandboxes-" {
		t.Errorf("view changes %q", got)
	}
	if w.Window().Title() != "MCP Sandbox" {
		t.Errorf("title %q", w.Window().Title())
	}
}

// TestSettingsUpdateCheck: ticking "Check for updates" and saving writes
// [update] check = true through the config editor, keeping the file's
// comments; unticking writes it back off.
func TestSettingsUpdateCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	const orig = "# my settings\n[limits]\nmemory_mb = 768 # enough\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	a := test.NewTempApp(t)
	act := (&fakes{}).actions()
	act.Settings = SettingsActions{
		Load: func() (*config.Config, error) { return config.Load(path) },
		Save: func(ctx context.Context, c *config.Config) (string, error) {
			_, err := config.Save(path, c)
			return "Saved", err
		},
	}
	w := New(a, Options{Actions: act, Now: func() time.Time { return now }, Go: func(g func()) { g() }})
	t.Cleanup(w.Close)
	w.Settings.Reload()
	w.SelectTab(TabSettings)
	box := w.Settings.Check("update.check")
	if box == nil || box.Checked {
		t.Fatalf("update check box %v: want one, unticked (off by default)", box)
	}
	for _, want := range []bool{true, false} {
		test.Tap(box)
		w.Settings.Save()
		if msg := w.Settings.Message(); msg != "Saved" {
			t.Fatalf("message = %q", msg)
		}
		c, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.Update.Check != want || c.Limits.MemoryMB != 768 {
			t.Errorf("after tapping: update.check = %v (want %v), memory_mb = %d", c.Update.Check, want, c.Limits.MemoryMB)
		}
		b, _ := os.ReadFile(path)
		if !strings.Contains(string(b), "# my settings") || !strings.Contains(string(b), "# enough") {
			t.Errorf("comments lost:\n%s", b)
		}
		if want && !strings.Contains(string(b), "check = true") {
			t.Errorf("no check = true in:\n%s", b)
		}
	}
}

// TestTabsFitSmallWindow: at 800×560 no tab needs more room than the
// window has (the window would not shrink, and the rest would be cut),
// and the Sandboxes table's columns, Stop first, fit across it.
func TestTabsFitSmallWindow(t *testing.T) {
	w, f := newWindow(t)
	f.clients = []ClientRow{{Name: "claude", Display: "Claude Desktop", Installed: true, Configured: true, Matches: true,
		Path: "/home/me/.config/Claude/claude_desktop_config.json"}}
	w.Status.Set(statusInfo())
	w.Sandboxes.Set(sandboxRows())
	w.Settings.Reload()
	w.Show()
	w.Window().Resize(fyne.NewSize(800, 560))
	for _, tab := range []string{TabStatus, TabSandboxes, TabClients, TabSettings, TabActivity, TabChanges} {
		w.SelectTab(tab)
		if min := w.tabs.MinSize(); min.Width > 800 || min.Height > 560 {
			t.Errorf("%s: the window needs at least %v, more than 800×560", tab, min)
		}
	}
	var sum float32
	for _, c := range sandboxColumns {
		sum += c.width
	}
	if got := w.Sandboxes.grid.table.Size().Width; sum > got {
		t.Errorf("the Sandboxes columns need %v px, the table has %v", sum, got)
	}
}
