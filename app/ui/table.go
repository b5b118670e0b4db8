package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
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

// A button acts on a row by its key (the grid's key func), never by its
// row number: rows come and go between a refresh and a paint or a click,
// and a number then names another row or none.
type columnButton struct {
	label func(key string) string
	tap   func(key string)
	// disabled, if set, greys the button out for a row (while its action
	// runs, say).
	disabled func(key string) bool
}

// grid is a read-only table with a header row, sized columns, and cells
// that are text or buttons. It draws only from what its last Refresh read
// (cells and keys), never from its owner's live data, so rows that vanish
// between a refresh and a paint cannot make it read past their end. A cell's text is broken into lines that fit
// its column (at its line breaks, then between words and after path
// separators) and each row is as tall as its longest cell: nothing is cut
// off and nothing needs a sideways scroll.
type grid struct {
	table *widget.Table
	cols  []column
	rows  func() int
	text  func(row, col int) string
	// key names a row for its buttons and selection (a sandbox's id, a
	// client's name); read at Refresh with the cells.
	key func(row int) string
	// lines is how many lines of text a row holds at least (0 or 1: one).
	lines int
	// grow, when set, names the column that takes the width the others
	// leave (its width is then the least it gets); 0 leaves them as set.
	grow string
	// selected, when set, is the key of the row drawn as selected (the
	// whole row, by key: it follows the row when rows come, go or sort).
	selected func() string
	// header, when set, is a column's header text (a sort mark with the
	// title, say); tapHeader, when set, is called when one is clicked.
	header    func(col int) string
	tapHeader func(col int)

	// content is the table in a layout that widens the grow column with
	// the window; put it, not the table, into the tab.
	content fyne.CanvasObject
	widths  []float32 // as drawn

	// cells is every cell's text as shown, lines broken, by row; tall
	// is the rows given a height of their own.
	cells   [][]string
	keys    []string
	marks   map[*canvas.Rectangle]string // each cell's selection mark, and the key of the row it was drawn for
	tall    map[int]bool
	heights map[int]float32 // a label's height by its number of lines
}

// newGrid returns a grid over rows() rows whose cell (row, col) reads
// text(row, col) and whose row is named key(row).
func newGrid(cols []column, rows func() int, key func(row int) string, text func(row, col int) string) *grid {
	g := &grid{cols: cols, rows: rows, key: key, text: text, tall: map[int]bool{}, heights: map[int]float32{}, marks: map[*canvas.Rectangle]string{}}
	g.table = widget.NewTableWithHeaders(
		func() (int, int) { return len(g.cells), len(g.cols) },
		g.createCell,
		g.updateCell,
	)
	g.table.ShowHeaderColumn = false
	g.table.CreateHeader = func() fyne.CanvasObject {
		if g.tapHeader == nil {
			l := widget.NewLabel("")
			l.TextStyle.Bold = true
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		}
		h := &headerLabel{}
		h.ExtendBaseWidget(h)
		h.TextStyle.Bold = true
		h.Truncation = fyne.TextTruncateEllipsis
		return h
	}
	g.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col < 0 || id.Col >= len(g.cols) {
			return
		}
		text := g.cols[id.Col].title
		if g.header != nil {
			text = g.header(id.Col)
		}
		switch h := o.(type) {
		case *headerLabel:
			h.col, h.tap = id.Col, g.tapHeader
			h.SetText(text)
		case *widget.Label:
			h.SetText(text)
		}
	}
	for i, c := range cols {
		g.table.SetColumnWidth(i, c.width)
		g.widths = append(g.widths, c.width)
	}
	g.content = container.New(&growLayout{g: g}, g.table)
	return g
}

// growLayout gives the table its whole room and the grow column what the
// other columns leave of it.
type growLayout struct{ g *grid }

func (l *growLayout) MinSize(objs []fyne.CanvasObject) fyne.Size { return objs[0].MinSize() }

func (l *growLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Resize(size)
	g := l.g
	if g.grow == "" {
		return
	}
	// Each column is followed by a separator of theme.Padding; one more
	// keeps the last clear of the edge.
	rest := size.Width - theme.Padding()*float32(len(g.cols))
	at := -1
	for i, c := range g.cols {
		if c.title == g.grow {
			at = i
			continue
		}
		rest -= c.width
	}
	if at < 0 {
		return
	}
	w := max(rest, g.cols[at].width)
	if w != g.widths[at] {
		g.widths[at] = w
		g.table.SetColumnWidth(at, w)
		g.Refresh() // the lines break anew
	}
}

// headerLabel is a column's header: a bold label that, when its grid
// sorts, is clicked to sort by its column.
type headerLabel struct {
	widget.Label
	col int
	tap func(col int)
}

// Tapped sorts by the header's column.
func (h *headerLabel) Tapped(*fyne.PointEvent) {
	if h.tap != nil {
		h.tap(h.col)
	}
}

// Cursor is the hand over a header that sorts.
func (h *headerLabel) Cursor() desktop.Cursor {
	if h.tap != nil {
		return desktop.PointerCursor
	}
	return desktop.DefaultCursor
}

// A cell holds the selection's background, a label and up to three
// buttons; updateCell shows the ones its column uses.
func (g *grid) createCell() fyne.CanvasObject {
	l := widget.NewLabel("")
	// No truncation: the text is broken to fit its column already, and a
	// label that may truncate measures its text again at every SetText
	// (most of the time a table of many rows took to redraw).
	if g.lines > 1 {
		// The table sizes its rows by this first cell: make it as tall
		// as the lines a row holds.
		l.SetText(strings.TrimSuffix(strings.Repeat("M\n", g.lines), "\n"))
	}
	b1, b2, b3 := widget.NewButton("", nil), widget.NewButton("", nil), widget.NewButton("", nil)
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameSelection))
	bg.Hide()
	return container.NewStack(bg, l, container.NewHBox(b1, b2, b3))
}

func (g *grid) updateCell(id widget.TableCellID, o fyne.CanvasObject) {
	stack := o.(*fyne.Container)
	bg := stack.Objects[0].(*canvas.Rectangle)
	l := stack.Objects[1].(*widget.Label)
	box := stack.Objects[2].(*fyne.Container)
	if id.Col < 0 || id.Col >= len(g.cols) {
		return
	}
	c := g.cols[id.Col]
	key, ok := g.Key(id.Row)
	if !ok {
		key = ""
	}
	g.marks[bg] = key
	g.mark(bg, key)
	if len(c.buttons) == 0 || !ok {
		text := ""
		if ok {
			text = g.cells[id.Row][id.Col]
		}
		l.SetText(text)
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
		cb := c.buttons[i]
		label := cb.label(key)
		if label == "" {
			b.Hide()
			continue
		}
		b.SetText(label)
		b.OnTapped = func() { cb.tap(key) }
		if cb.disabled != nil && cb.disabled(key) {
			b.Disable()
		} else {
			b.Enable()
		}
		b.Show()
	}
	box.Refresh() // the buttons' sizes changed with their labels
}

// Refresh reads every cell again, breaks its text to fit, sizes the rows
// and redraws.
func (g *grid) Refresh() {
	n := g.rows()
	cells := make([][]string, n)
	keys := make([]string, n)
	height := make([]int, n) // in lines
	base := max(g.lines, 1)
	for r := range n {
		cells[r] = make([]string, len(g.cols))
		keys[r] = g.key(r)
		height[r] = base
		for c, col := range g.cols {
			if len(col.buttons) > 0 {
				continue
			}
			lines := fitLines(g.text(r, c), g.widths[c]-2*theme.InnerPadding())
			cells[r][c] = strings.Join(lines, "\n")
			height[r] = max(height[r], len(lines))
		}
	}
	g.cells, g.keys = cells, keys
	// Each new row height redraws the cells in view; shrunk to nothing,
	// the table has none in view (2000 rows of the audit log took seconds
	// otherwise).
	size := g.table.Size()
	g.table.Resize(fyne.Size{})
	for r, h := range height {
		switch {
		case h > base:
			g.table.SetRowHeight(r, g.linesHeight(h))
			g.tall[r] = true
		case g.tall[r]:
			g.table.SetRowHeight(r, g.linesHeight(base))
			delete(g.tall, r)
		}
	}
	for r := range g.tall {
		if r >= n {
			delete(g.tall, r)
		}
	}
	g.table.Resize(size)
	g.table.Refresh()
}

// mark shows bg, a cell's selection mark, when key is the selected row's.
func (g *grid) mark(bg *canvas.Rectangle, key string) {
	on := key != "" && g.selected != nil && key == g.selected()
	switch {
	case on && !bg.Visible():
		bg.FillColor = theme.Color(theme.ColorNameSelection)
		bg.Show()
		bg.Refresh()
	case !on && bg.Visible():
		bg.Hide()
		bg.Refresh()
	}
}

// selectionMoved marks the selected row's cells and unmarks the others,
// without drawing any text again.
func (g *grid) selectionMoved() {
	for bg, key := range g.marks {
		g.mark(bg, key)
	}
}

// Cell returns the text a cell shows, its lines broken as they are drawn.
func (g *grid) Cell(row, col int) string { return g.cells[row][col] }

// Key names the row the grid drew at row, as of its last Refresh; false
// when it drew no such row.
func (g *grid) Key(row int) (string, bool) {
	if row < 0 || row >= len(g.keys) {
		return "", false
	}
	return g.keys[row], true
}

// linesHeight is the height of a label of n lines.
func (g *grid) linesHeight(n int) float32 {
	if h, ok := g.heights[n]; ok {
		return h
	}
	l := widget.NewLabel(strings.TrimSuffix(strings.Repeat("M\n", n), "\n"))
	h := l.MinSize().Height
	g.heights[n] = h
	return h
}

// fitLines breaks s into lines no wider than width: at its own line
// breaks, then after spaces and the separators of paths, image references
// and ids (/ \ : . - _ @ , =), and inside a word only when the word alone
// is too wide.
func fitLines(s string, width float32) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		out = append(out, fitParagraph(para, width)...)
	}
	return out
}

func fitParagraph(s string, width float32) []string {
	fits := func(t string) bool { return textWidth(strings.TrimRight(t, " ")) <= width }
	if fits(s) {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, tok := range tokens(s) {
		if fits(line + tok) {
			line += tok
			continue
		}
		if line != "" {
			lines = append(lines, strings.TrimRight(line, " "))
			line = ""
		}
		for !fits(tok) { // a word wider than the column: break it
			n := len([]rune(tok))
			i := 1
			for i < n && fits(string([]rune(tok)[:i+1])) {
				i++
			}
			lines = append(lines, string([]rune(tok)[:i]))
			tok = string([]rune(tok)[i:])
		}
		line = tok
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, strings.TrimRight(line, " "))
	}
	return lines
}

// tokens splits s after each space or separator, keeping every character.
func tokens(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if strings.ContainsRune(" /\\:.-_@,=", r) {
			out = append(out, s[start:i+len(string(r))])
			start = i + len(string(r))
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// textWidth is how wide a label draws s.
func textWidth(s string) float32 {
	return fyne.MeasureText(s, theme.TextSize(), fyne.TextStyle{}).Width
}
