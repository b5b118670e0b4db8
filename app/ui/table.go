package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// column is one column of a grid: its header, width, and either text or
// buttons.
type column struct {
	title string
	width float32
	// buttons, when set, make this a column of buttons; each row gets
	// them labelled by label(row) (an empty label hides the button).
	buttons []columnButton
}

type columnButton struct {
	label func(row int) string
	tap   func(row int)
	// disabled, if set, greys the button out for a row (while its action
	// runs, say).
	disabled func(row int) bool
}

// grid is a read-only table with a header row, sized columns, and cells
// that are text or buttons.
type grid struct {
	table *widget.Table
	cols  []column
	rows  func() int
	text  func(row, col int) string
	// lines is how many lines of text a row holds (0 or 1: one); a cell's
	// text may have that many lines, each cut with an ellipsis if too wide.
	lines int
}

// newGrid returns a grid over rows() rows whose cell (row, col) reads
// text(row, col).
func newGrid(cols []column, rows func() int, text func(row, col int) string) *grid {
	g := &grid{cols: cols, rows: rows, text: text}
	g.table = widget.NewTableWithHeaders(
		func() (int, int) { return g.rows(), len(g.cols) },
		g.createCell,
		g.updateCell,
	)
	g.table.ShowHeaderColumn = false
	g.table.CreateHeader = func() fyne.CanvasObject {
		l := widget.NewLabel("")
		l.TextStyle.Bold = true
		l.Truncation = fyne.TextTruncateEllipsis
		return l
	}
	g.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(g.cols) {
			o.(*widget.Label).SetText(g.cols[id.Col].title)
		}
	}
	for i, c := range cols {
		g.table.SetColumnWidth(i, c.width)
	}
	return g
}

// A cell holds a label and up to three buttons; updateCell shows the ones
// its column uses.
func (g *grid) createCell() fyne.CanvasObject {
	l := widget.NewLabel("")
	l.Truncation = fyne.TextTruncateEllipsis
	if g.lines > 1 {
		// The table sizes its rows by this first cell: make it as tall
		// as the lines a row holds.
		l.SetText(strings.TrimSuffix(strings.Repeat("M\n", g.lines), "\n"))
	}
	b1, b2, b3 := widget.NewButton("", nil), widget.NewButton("", nil), widget.NewButton("", nil)
	return container.NewStack(l, container.NewHBox(b1, b2, b3))
}

func (g *grid) updateCell(id widget.TableCellID, o fyne.CanvasObject) {
	stack := o.(*fyne.Container)
	l := stack.Objects[0].(*widget.Label)
	box := stack.Objects[1].(*fyne.Container)
	c := g.cols[id.Col]
	if len(c.buttons) == 0 {
		l.SetText(g.text(id.Row, id.Col))
		l.Show()
		box.Hide()
		return
	}
	l.Hide()
	box.Show()
	for i, obj := range box.Objects {
		b := obj.(*widget.Button)
		if i >= len(c.buttons) {
			b.Hide()
			continue
		}
		cb, row := c.buttons[i], id.Row
		label := cb.label(row)
		if label == "" {
			b.Hide()
			continue
		}
		b.SetText(label)
		b.OnTapped = func() { cb.tap(row) }
		if cb.disabled != nil && cb.disabled(row) {
			b.Disable()
		} else {
			b.Enable()
		}
		b.Show()
	}
	box.Refresh() // the buttons' sizes changed with their labels
}

// Refresh redraws every cell.
func (g *grid) Refresh() { g.table.Refresh() }
