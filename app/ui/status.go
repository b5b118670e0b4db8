package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// StatusInfo is everything the Status tab shows.
type StatusInfo struct {
	// Detecting is set while the Docker endpoint is being looked for.
	Detecting bool
	// Docker is what detection found, by the rule the servers follow too
	// (the config's docker.host first); nil before the first detection.
	Docker *dockerhost.Result
	// Runtime names the container runtime sandboxes get, such as
	// "runc (the engine's default)" or "gVisor (runsc)".
	Runtime string
	// Server is the bundled mcp-sandbox; ServerErr says why none was
	// found; ServerVersion is what it reports.
	Server        bundled.Server
	ServerErr     string
	ServerVersion string
	// HTTP is the tray's own HTTP server.
	HTTP HTTPInfo
	// Paused is set while the service is paused from the tray.
	Paused bool
	// Sandboxes counts the managed sandboxes and Warm the unclaimed
	// warm-pool containers, by sandboxwatch.Count's rule.
	Sandboxes int
	Warm      int
	// Lost says why the engine that answered stopped answering ("" while
	// it answers or was never found): the headline must not say Running.
	Lost string
	// Offer is a newer release the tray offers in its menu.
	Offer string
	// Health is what the doctor's checks found on the engine (images,
	// interpreters, limits; app/internal/health); nil until they ran.
	Health *health.Engine
	// Cluster is set when sandboxes run on Kubernetes: Docker, Runtime
	// and Lost are then unused.
	Cluster *ClusterInfo
}

// HTTPInfo describes the tray's `serve --http` child.
type HTTPInfo struct {
	// Enabled is set when tray.http_port is not 0.
	Enabled    bool
	URL, Token string
	// State is the supervisor's word for the child ("running", …).
	State string
}

// StatusActions are the Status tab's buttons.
type StatusActions struct {
	// Test spawns the bundled server as a client would and runs
	// print("hello").
	Test func(ctx context.Context) (bundled.TestResult, error)
	// Detect looks for the Docker endpoint again.
	Detect func()
	// Pause pauses (true) or starts (false) the service.
	Pause func(ctx context.Context, paused bool) error
	// Pull pulls an image through the backend (EnsureImage), telling
	// progress, and has the checks run again.
	Pull func(ctx context.Context, image string, progress PullProgress) error
	// Images lists the images the engine has, for "Choose a local
	// image…" on a language that cannot run.
	Images func(ctx context.Context) ([]health.LocalImage, error)
	// Use checks that code in language runs in image, as doctor checks
	// it, and only then sets the language's image in the config file; it
	// says what it wrote, or why not.
	Use func(ctx context.Context, language, image string) (string, error)
}

// StatusTab is the Status tab.
type StatusTab struct {
	w       *Window
	act     StatusActions
	content *container.Scroll

	headline *widget.Label
	pauseBtn *widget.Button
	testBtn  *widget.Button
	testOut  *widget.Label
	info     StatusInfo
	tested   string // how the last Test went: "", "ok" or "failed"
	chosen   string // what the last image chosen wrote, for the checklist
}

func newStatusTab(w *Window, act StatusActions) *StatusTab {
	t := &StatusTab{w: w, act: act}
	t.headline = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	t.headline.Wrapping = fyne.TextWrapWord // a long reason must not widen the window
	t.testOut = wrapped("Spawns the bundled server over stdio, as a client does, and runs print(\"hello\").")
	t.testBtn = widget.NewButtonWithIcon("Test", theme.MediaPlayIcon(), t.test)
	t.pauseBtn = widget.NewButton("", t.togglePause)
	t.content = container.NewVScroll(container.NewVBox())
	t.info = StatusInfo{Detecting: true}
	t.rebuild() // so Set always finds a body to keep
	return t
}

// togglePause starts a paused service, or pauses a running one after
// asking (pausing removes every sandbox, other clients' too).
func (t *StatusTab) togglePause() {
	if t.act.Pause == nil {
		return
	}
	if t.info.Paused {
		t.w.async(func(ctx context.Context) error { return t.act.Pause(ctx, false) }, t.pauseDone)
		return
	}
	ConfirmPause(t.w.win, t.info.Count(), t.info.HTTP.Enabled, func() {
		t.w.async(func(ctx context.Context) error { return t.act.Pause(ctx, true) }, t.pauseDone)
	})
}

// Count is the info's count, by the one rule (sandboxwatch.Count).
func (info StatusInfo) Count() sandboxwatch.Count {
	return sandboxwatch.Count{Sandboxes: info.Sandboxes, Warm: info.Warm}
}

// ConfirmPause asks before pausing, with n sandboxes running and the
// tray's HTTP server on or off, naming only what pausing does; pause runs
// if the person chooses Pause.
func ConfirmPause(parent fyne.Window, n sandboxwatch.Count, httpOn bool, pause func()) {
	msg := "Pausing removes every sandbox, including those other AI clients are using; servers refuse new ones until you choose Start."
	if httpOn {
		msg = "Pausing stops the HTTP server and removes every sandbox, including those other AI clients are using; servers refuse new ones until you choose Start."
	}
	if n.Warm > 0 {
		msg = plural(n.Warm, "warm sandbox is", "warm sandboxes are") + " kept ready. " + msg
	}
	if n.Sandboxes > 0 {
		msg = plural(n.Sandboxes, "sandbox runs", "sandboxes run") + " now. " + msg
	}
	confirm("Pause MCP Sandbox?", msg, "Pause", parent, pause)
}

func (t *StatusTab) pauseDone(err error) {
	if err != nil {
		dialog.ShowError(err, t.w.win)
	}
}

func wrapped(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// Set shows info. New counts of sandboxes change the headline only;
// anything else builds the tab again whole: that changes seldom (a new
// detection, a pause), and a fresh layout never leaves stale sizes behind.
func (t *StatusTab) Set(info StatusInfo) {
	if onlyCountsDiffer(t.info, info) {
		// The counts are in the headline alone (the pause question reads
		// t.info when it is asked). Under churn the window is told five
		// times a second, and a tab built again each time kept a minute
		// of discarded widgets alive in Fyne's renderer cache (about
		// 40 MB in a soak).
		t.info = info
		t.headline.SetText(headline(info))
		return
	}
	if info.Health != t.info.Health {
		t.chosen = "" // the checks ran again: the checklist says how it went
	}
	t.info = info
	t.rebuild()
}

// onlyCountsDiffer says whether b shows what a shows but for the numbers
// of sandboxes and warm ones.
func onlyCountsDiffer(a, b StatusInfo) bool {
	if (a.Cluster == nil) != (b.Cluster == nil) || a.Cluster != nil && *a.Cluster != *b.Cluster {
		return false
	}
	a.Sandboxes, a.Warm, a.Cluster = b.Sandboxes, b.Warm, b.Cluster
	return a == b
}

// rebuild builds the tab again from t.info and what the other tabs hold
// (the checklist names the clients, the servers connected and how the
// last Test went).
func (t *StatusTab) rebuild() {
	info := t.info
	t.headline.SetText(headline(info))
	icon := statusIcon(info)
	detect := widget.NewButtonWithIcon("Detect again", theme.ViewRefreshIcon(), func() {
		if t.act.Detect != nil {
			t.act.Detect()
		}
	})
	left := []fyne.CanvasObject{
		widget.NewCard("Docker", "", container.NewVBox(widget.NewForm(dockerItems(info)...), container.NewHBox(detect))),
	}
	if detected(info) {
		left = append(left, widget.NewCard("Endpoints tried", "", widget.NewForm(endpointItems(info)...)))
	}
	switch {
	case info.Lost != "":
		left = append([]fyne.CanvasObject{widget.NewCard("What to do", "", prose(
			"Start Docker again (Docker Desktop, `colima start`, `sudo systemctl start docker`, …): MCP Sandbox notices by itself "+
				"and the sandboxes that survived show again. What the engine said: "+info.Lost))}, left...)
	case info.Docker != nil && info.Docker.Hint != "":
		left = append(left, widget.NewCard("What to do", "", prose(info.Docker.Hint)))
	}
	if info.Lost == "" && chosen(info) != nil {
		left = append(t.healthCards(info.Health), left...)
	}
	if info.Cluster != nil {
		left = clusterCards(info.Cluster, detect)
	}
	// Pausing stops sandboxes through the engine: without one it can do
	// nothing but set the flag, so it waits (Start stays available).
	if info.Lost != "" && !info.Paused {
		t.pauseBtn.Disable()
	} else {
		t.pauseBtn.Enable()
	}
	if info.ServerErr != "" {
		t.testBtn.Disable()
	} else {
		t.testBtn.Enable()
	}
	right := []fyne.CanvasObject{widget.NewCard("Bundled server", "", container.NewVBox(
		widget.NewForm(serverItems(info)...),
		container.NewBorder(nil, nil, container.NewVBox(t.testBtn), nil, t.testOut)))}
	if info.HTTP.Enabled {
		right = append(right, widget.NewCard("HTTP server", "for clients that connect by URL", widget.NewForm(httpItems(info.HTTP)...)))
	}
	if c := t.connectCard(info); c != nil {
		right = append(right, c)
	}
	if info.Paused {
		t.pauseBtn.SetText("Start")
		t.pauseBtn.SetIcon(theme.MediaPlayIcon())
	} else {
		t.pauseBtn.SetText("Pause")
		t.pauseBtn.SetIcon(theme.MediaPauseIcon())
	}
	head := container.NewBorder(nil, nil, widget.NewIcon(icon), t.pauseBtn, t.headline)
	if info.Offer != "" {
		right = append(right, widget.NewCard("Update", "", wrapped("MCP Sandbox "+info.Offer+" is available: choose “Install MCP Sandbox "+info.Offer+"…” in the tray menu.")))
	}
	// Keep the scroll position: the tab is rebuilt when sandboxes come
	// and go, and the reader must not be sent back to the top.
	off := t.content.Offset
	// One column: the cards keep their full width down to 800 px, with
	// nothing clipped.
	top := []fyne.CanvasObject{head}
	if info.Cluster == nil {
		top = append(top, t.checklistCard(info))
	}
	t.content.Content = container.NewVBox(append(append(top, left...), right...)...)
	t.content.Refresh()
	t.content.ScrollToOffset(off)
}

// statusIcon is the icon beside the headline.
func statusIcon(info StatusInfo) fyne.Resource {
	icon := theme.ConfirmIcon()
	switch {
	case info.Cluster != nil && info.Cluster.Err != "":
		icon = theme.ErrorIcon()
	case info.Cluster != nil && !info.Cluster.Answered:
		icon = theme.SearchIcon()
	case info.Lost != "" || info.Docker != nil && info.Docker.Chosen == nil:
		icon = theme.ErrorIcon()
	case info.Paused:
		icon = theme.MediaPauseIcon()
	case healthHeadline(info.Health) != "":
		icon = theme.WarningIcon()
	case info.Detecting && info.Docker == nil:
		icon = theme.SearchIcon()
	}
	return icon
}

// Headline is the one line at the top of the tab, as it is shown.
func (t *StatusTab) Headline() string { return t.headline.Text }

// headline is the one line at the top of the tab.
func headline(info StatusInfo) string {
	if info.Cluster != nil {
		return clusterHeadline(info)
	}
	var parts []string
	switch {
	case info.Detecting && info.Docker == nil:
		return "Looking for Docker…"
	case info.Lost != "":
		return "Docker stopped answering: sandboxes cannot start or run until it is back"
	case info.Docker != nil && info.Docker.Chosen == nil && info.Docker.Explicit() != nil:
		return "Docker not used: " + info.Docker.Explicit().Choice() + " is not usable, and no other engine stands in for it"
	case info.Docker != nil && info.Docker.Chosen == nil:
		return "Docker not found: sandboxes cannot start until an engine answers"
	case info.Paused:
		parts = append(parts, "Paused: servers refuse new sandboxes")
	case healthHeadline(info.Health) != "":
		parts = append(parts, healthHeadline(info.Health))
	default:
		parts = append(parts, "Running")
	}
	if c := chosen(info); c != nil {
		parts = append(parts, c.Product())
	}
	parts = append(parts, info.Count().String())
	return strings.Join(parts, " · ")
}

func chosen(info StatusInfo) *dockerhost.Candidate {
	if info.Docker == nil {
		return nil
	}
	return info.Docker.Chosen
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func dockerItems(info StatusInfo) []*widget.FormItem {
	r := info.Docker
	var items []*widget.FormItem
	add := func(k, v string) { items = append(items, widget.NewFormItem(k, wrapped(v))) }
	switch {
	case r == nil:
		add("Endpoint", "looking…")
	case r.Chosen != nil:
		add("Endpoint", r.Chosen.Host)
		add("Why", r.Reason)
	case r.Explicit() != nil:
		add("Endpoint", "none: "+r.Explicit().Choice()+" is not usable")
		add("Why", r.Reason)
	default:
		add("Endpoint", "none answered")
		add("Why", r.Reason)
	}
	if c := chosen(info); c != nil {
		add("Engine", strings.Join(nonEmpty(c.Product(), c.OS, apiVersion(c.APIVersion)), " · "))
	}
	if info.Runtime != "" {
		add("Runtime", info.Runtime)
	}
	return items
}

// detected says whether detection chose the engine (or is still
// looking): the places it tried are worth a list then. When DOCKER_HOST,
// docker.host or a context chose one that answers, they are not.
func detected(info StatusInfo) bool {
	r := info.Docker
	return r == nil || r.Explicit() == nil || r.Chosen == nil
}

// endpointItems lists each candidate and whether it answered; local
// sockets where nothing exists share one line, as in `mcp-sandbox doctor`.
func endpointItems(info StatusInfo) []*widget.FormItem {
	r := info.Docker
	var eps []*widget.FormItem
	var absent []string
	if r != nil {
		var listed []*dockerhost.Candidate
		listed, absent = r.Shown()
		for _, c := range listed {
			mark, what := "✗ ", c.Error
			if c.OK {
				mark, what = "✓ ", "answered: "+c.Product()
			}
			if c == r.Chosen {
				what += " (used)"
			}
			eps = append(eps, widget.NewFormItem(mark+c.Source, wrapped(c.Host+"\n"+what)))
		}
	}
	if len(absent) > 0 {
		paths := container.NewVBox()
		for _, p := range absent {
			paths.Add(wrapped(p)) // a long path wraps: nothing is cut at 800 px
		}
		eps = append(eps, widget.NewFormItem("Nothing at", paths))
	}
	if len(eps) == 0 {
		eps = append(eps, widget.NewFormItem("", widget.NewLabel("–")))
	}
	return eps
}

func apiVersion(v string) string {
	if v == "" {
		return ""
	}
	return "API " + v
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

func serverItems(info StatusInfo) []*widget.FormItem {
	if info.ServerErr != "" {
		return []*widget.FormItem{widget.NewFormItem("Path", wrapped(info.ServerErr))}
	}
	return []*widget.FormItem{
		widget.NewFormItem("Path", wrapped(info.Server.Path)),
		widget.NewFormItem("Found", widget.NewLabel(info.Server.Source)),
		widget.NewFormItem("Version", wrapped(orDash(info.ServerVersion))),
	}
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func httpItems(h HTTPInfo) []*widget.FormItem {
	copyBtn := func(s string) *widget.Button {
		return widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
			fyne.CurrentApp().Clipboard().SetContent(s)
		})
	}
	masked := strings.Repeat("•", 12)
	if len(h.Token) > 4 {
		masked += h.Token[len(h.Token)-4:]
	}
	return []*widget.FormItem{
		widget.NewFormItem("URL", container.NewHBox(widget.NewLabel(h.URL), copyBtn(h.URL))),
		widget.NewFormItem("Token", container.NewHBox(widget.NewLabel(masked), copyBtn(h.Token))),
		widget.NewFormItem("State", widget.NewLabel(orDash(h.State))),
	}
}

// TapTest presses the Test button.
func (t *StatusTab) TapTest() { t.test() }

// TestResult is the text beside the Test button.
func (t *StatusTab) TestResult() string { return t.testOut.Text }

// test runs the round trip and shows its outcome.
func (t *StatusTab) test() {
	if t.act.Test == nil {
		return
	}
	t.testBtn.Disable()
	t.testOut.SetText("Starting the server and a sandbox…")
	var res bundled.TestResult
	t.w.async(func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		var err error
		res, err = t.act.Test(ctx)
		return err
	}, func(err error) {
		t.testBtn.Enable()
		t.tested = "ok"
		if err != nil {
			t.tested = "failed"
		}
		t.rebuild() // the checklist's Test line
		if err != nil {
			t.testOut.SetText("Failed: " + err.Error())
			return
		}
		t.testOut.SetText(fmt.Sprintf("%s → %q in %s (server started in %s, version %s)",
			bundled.TestCode, strings.TrimSpace(res.Output), ms(res.RoundTrip), ms(res.Startup), res.ServerVersion))
	})
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
