package ui

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// DetailsActions read one sandbox for its details view, whichever server
// of this installation made it.
type DetailsActions struct {
	// Transcript returns what ran in the sandbox (the text of
	// sandbox://{id}/logs, as its server last wrote it), oldest first.
	Transcript func(ctx context.Context, id string) (string, error)
	// Files lists /workspace, recursively; true when the list was cut.
	Files func(ctx context.Context, id string) ([]backend.FileEntry, bool, error)
	// Save copies the sandbox path src to the host path dest through
	// copy_out's write fence, which may refuse it. Without overwrite an
	// existing dest is refused with an error wrapping hostfs.ErrExists;
	// with it, dest is replaced (still only where the fence allows).
	Save func(ctx context.Context, id, src, dest string, overwrite bool) (sandbox.CopyOutResult, error)
	// SaveDir is where the folder dialog starts (files.write_root); ""
	// leaves it to the dialog.
	SaveDir func() string
}

// transcriptShown bounds how much of a transcript the view shows (its
// end): a label of more text lays out slowly.
const transcriptShown = 64 << 10

// maxFilesShown bounds the file list.
const maxFilesShown = 2000

// Details is the details view of one sandbox, a window of its own. It
// renders from the Sandboxes tab's snapshot: when the sandbox leaves it,
// the view says it is gone and keeps what it showed.
type Details struct {
	t   *SandboxesTab
	id  string
	win fyne.Window

	row   sandboxwatch.Row
	seen  bool // a snapshot has listed the sandbox
	drawn bool // update has drawn d.row
	gone  bool

	header     *widget.Label
	goneLabel  *widget.Label
	mem, cpu   *widget.ProgressBar
	pids       *widget.ProgressBar
	limits     *widget.Label
	transcript *widget.Label
	scroll     *container.Scroll
	files      []backend.FileEntry // replaced whole, never changed in place
	fileList   *widget.List
	filesNote  *widget.Label
	selected   string // the selected file's path
	save, stop *widget.Button
	top        *fyne.Container // the header, the gone notice and the usage
	previews   *fyne.Container // its previews, each with a button
	network    *fyne.Container // what it may reach and did (detailsnetwork.go)
	netText    *widget.Label
}

// OpenDetails opens (or brings forward) the details view of sandbox id.
func (t *SandboxesTab) OpenDetails(id string) *Details {
	if d := t.open[id]; d != nil {
		d.win.Show()
		d.win.RequestFocus()
		return d
	}
	d := &Details{t: t, id: id, win: fyne.CurrentApp().NewWindow("Sandbox " + id + " - " + Title)}
	d.build()
	t.open[id] = d
	d.win.SetOnClosed(func() {
		delete(t.open, id)
		t.w.usageChanged()
	})
	t.w.usageChanged() // its bars sample usage, whichever tab is in view
	d.update(t.snap)
	d.win.Resize(fyne.NewSize(780, 720))
	d.win.Show()
	d.Reload()
	return d
}

// Details returns the open details view of sandbox id, or nil.
func (t *SandboxesTab) Details(id string) *Details { return t.open[id] }

func (d *Details) build() {
	d.header = wrapped("")
	d.goneLabel = wrapped("")
	d.goneLabel.Importance = widget.DangerImportance
	d.goneLabel.Hide()
	d.mem, d.cpu, d.pids = widget.NewProgressBar(), widget.NewProgressBar(), widget.NewProgressBar()
	d.limits = widget.NewLabel("")
	d.limits.Truncation = fyne.TextTruncateEllipsis
	usage := widget.NewForm(
		widget.NewFormItem("Memory", d.mem), widget.NewFormItem("CPU", d.cpu),
		widget.NewFormItem("Processes", d.pids), widget.NewFormItem("Limits", d.limits))
	d.transcript = widget.NewLabel("")
	d.transcript.Wrapping = fyne.TextWrapBreak
	d.transcript.Selectable = true
	d.scroll = container.NewVScroll(d.transcript)
	d.fileList = widget.NewList(func() int { return len(d.files) },
		func() fyne.CanvasObject { return widget.NewLabel("") },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(d.files) {
				o.(*widget.Label).SetText(fileLine(d.files[i]))
			}
		})
	d.fileList.OnSelected = func(i widget.ListItemID) {
		if i < len(d.files) {
			d.selected = d.files[i].Path
			d.save.Enable()
		}
	}
	d.filesNote = widget.NewLabel("")
	d.filesNote.Truncation = fyne.TextTruncateEllipsis
	d.save = widget.NewButtonWithIcon("Save to…", theme.DocumentSaveIcon(), d.chooseSave)
	d.save.Disable()
	files := container.NewBorder(container.NewBorder(nil, nil, nil, d.save, heading("Files in /workspace")), d.filesNote, nil, nil, d.fileList)
	ran := container.NewBorder(heading("What ran, newest last"), nil, nil, nil, d.scroll)
	split := container.NewVSplit(ran, files)
	split.SetOffset(0.62)
	d.stop = widget.NewButtonWithIcon("Stop sandbox", theme.MediaStopIcon(), d.confirmStop)
	d.stop.Importance = widget.DangerImportance
	refresh := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), d.Reload)
	d.previews = container.NewVBox()
	d.previews.Hide()
	d.newNetworkPart()
	d.top = container.NewVBox(d.header, d.goneLabel, usage, d.network, d.previews)
	d.win.SetContent(container.NewBorder(d.top, container.NewHBox(refresh, layout.NewSpacer(), d.stop), nil, nil, split))
}

// heading is a bold line above a part of the view.
func heading(s string) *widget.Label {
	return widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

func fileLine(f backend.FileEntry) string {
	switch {
	case f.IsDir:
		return f.Path + "/"
	case f.Link != "":
		return f.Path + " → " + cleanText(f.Link, 256)
	}
	return f.Path + "  (" + sandboxwatch.Bytes(uint64(max(f.Size, 0))) + ")"
}

// update shows the sandbox as snapshot s has it, or says it is gone.
func (d *Details) update(s sandboxwatch.Snapshot) {
	row, found := d.row, false
	for _, r := range s.Rows {
		if r.ID == d.id {
			row, found = r, true
		}
	}
	// Gone: a listing that worked (not the empty snapshot before the
	// first, nor one taken while the engine does not answer) lacks it.
	gone := d.gone || (!found && s.Err == nil && (d.seen || found || !s.Updated.IsZero()))
	if d.drawn && row == d.row && gone == d.gone {
		return // nothing it shows changed (most snapshots, for one view)
	}
	d.seen = d.seen || found
	d.row, d.gone, d.drawn = row, gone, true
	r := d.row
	if r.ID == "" {
		d.header.SetText(d.id)
	} else {
		d.header.SetText(fmt.Sprintf("%s · %s · image %s · made by %s · network %s · %s old",
			r.ID, r.Language, r.Image, r.ClientLabel(), r.NetworkLabel(), r.Age(d.t.w.o.Now())))
	}
	if d.gone {
		d.goneLabel.SetText("This sandbox is gone: it was stopped, expired or removed. What it showed last stays here.")
		d.goneLabel.Show()
		d.stop.Disable()
		d.save.Disable()
	}
	bar(d.mem, float64(r.Usage.MemoryBytes), float64(memLimit(r)), r.Memory())
	bar(d.cpu, r.Usage.CPUPercent, r.Limits.CPUs*100, r.CPU())
	bar(d.pids, float64(r.Usage.Pids), float64(r.Limits.Pids), r.Pids())
	ws := "–"
	if r.Limits.WorkspaceMB > 0 {
		ws = sandboxwatch.Bytes(uint64(r.Limits.WorkspaceMB) << 20)
	}
	limits := fmt.Sprintf("workspace %s · each command %s · expires %s", ws, execTimeout(r.Limits.ExecTimeoutSeconds), r.Expires(d.t.w.o.Now()))
	if src := r.UsageSource(); src != "" {
		limits += " · " + src
	}
	d.limits.SetText(limits)
	d.showNetwork(r)
	d.showPreviews(r.Previews())
	d.top.Refresh() // the notice came, lines wrapped anew: lay out again
	d.win.Content().Refresh()
}

func memLimit(r sandboxwatch.Row) uint64 {
	if r.Limits.MemoryMB > 0 {
		return uint64(r.Limits.MemoryMB) << 20
	}
	return r.Usage.MemoryLimit
}

// bar shows used of limit, labelled text ("12 MiB / 512 MiB").
func bar(b *widget.ProgressBar, used, limit float64, text string) {
	b.Max = max(limit, 1)
	b.Value = min(max(used, 0), b.Max)
	b.TextFormatter = func() string { return text }
	b.Refresh()
}

// Reload reads the transcript and the file list again.
func (d *Details) Reload() {
	act := d.t.act.Details
	if act.Transcript != nil {
		var text string
		d.t.w.async(func(ctx context.Context) (err error) {
			text, err = act.Transcript(ctx, d.id)
			return err
		}, func(err error) { d.setTranscript(text, err) })
	}
	if act.Files != nil && !d.gone {
		var files []backend.FileEntry
		var cut bool
		d.t.w.async(func(ctx context.Context) (err error) {
			files, cut, err = act.Files(ctx, d.id)
			return err
		}, func(err error) { d.setFiles(files, cut, err) })
	}
}

func (d *Details) setTranscript(text string, err error) {
	switch {
	case err != nil && d.gone:
		text = "The sandbox is gone, and its transcript with it."
	case err != nil:
		text = "Nothing recorded yet (" + cleanText(err.Error(), 300) + ")."
	case text == "":
		text = "Nothing has run in this sandbox yet."
	default:
		text = cleanText(text, 0)
		if len(text) > transcriptShown {
			text = "[… the start is cut; the newest part follows …]\n" + strings.ToValidUTF8(text[len(text)-transcriptShown:], "")
		}
	}
	d.transcript.SetText(text)
	d.scroll.Refresh() // the label's new height, before scrolling to its end
	d.scroll.ScrollToBottom()
}

func (d *Details) setFiles(files []backend.FileEntry, cut bool, err error) {
	if err != nil {
		d.filesNote.SetText("Cannot list the files: " + cleanText(err.Error(), 300))
		return
	}
	if len(files) > maxFilesShown {
		files, cut = files[:maxFilesShown], true
	}
	shown := make([]backend.FileEntry, len(files))
	for i, f := range files {
		f.Path = cleanText(f.Path, 512)
		shown[i] = f
	}
	d.files = shown
	note := plural(len(shown), "entry", "entries") + " · Save to… copies the selected one through copy_out's fence (files.write_root, write_deny)"
	if cut {
		note = "the list was cut · " + note
	}
	d.filesNote.SetText(note)
	d.selected = ""
	d.fileList.UnselectAll()
	d.save.Disable()
	d.fileList.Refresh()
}

func (d *Details) confirmStop() { d.t.askStop(d.id, d.win) }

// Window returns the view's window, for tests.
func (d *Details) Window() fyne.Window { return d.win }

// Gone reports whether the view says the sandbox is gone.
func (d *Details) Gone() bool { return d.gone }

// TranscriptText returns the transcript as shown.
func (d *Details) TranscriptText() string { return d.transcript.Text }

// Files returns the file entries as shown.
func (d *Details) Files() []backend.FileEntry { return d.files }

// Close closes the view.
func (d *Details) Close() { d.win.Close() }
