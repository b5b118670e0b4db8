package interp

import (
	"bytes"
	"fmt"
	"image/png"
	"io"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// maxFigures bounds the images one run returns.
const maxFigures = 16

// figureTally is what a run kept of its figures and what it dropped.
type figureTally struct {
	figures  [][]byte // PNG images
	left     int      // bytes of limits.image_bytes not yet taken
	reserved int      // bytes taken from the server's budget, figures in flight included
	pending  int      // figures admitted whose payload has not arrived
	// dropped figures and their bytes; busy: some were dropped because
	// the server's budget was in use by other calls.
	dropped      int
	droppedBytes int64
	busy         bool
	// forged: dropped figures that were not PNG images (counted in
	// dropped too).
	forged int
}

func (t *figureTally) drop(size int, busy bool) {
	t.dropped++
	t.droppedBytes += int64(size)
	t.busy = t.busy || busy
}

// gate decides at a frame's header how much of it is kept. Frames other
// than figures are bounded by runner.MaxPayload and cut to the output
// budget as they arrive; a figure is kept only when the run in progress
// has room for it (at most maxFigures, limits.image_bytes in all) and the
// server's figure budget has its bytes, else it is read past and counted
// as dropped.
func (it *interp) gate(kind string, size int) int {
	if kind != runner.KindFig {
		return size
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	it.figFor = nil
	c := it.call
	switch {
	case c == nil:
		return 0 // between runs: a figure no run asked for
	case size == 0 || len(c.figs.figures)+c.figs.pending >= maxFigures || size > c.figs.left:
		c.figs.drop(size, false)
		return 0
	case !it.figures.take(size):
		c.figs.drop(size, true)
		return 0
	}
	c.figs.left -= size
	c.figs.reserved += size
	c.figs.pending++
	it.figFor = c
	return size
}

// takeFigure keeps a figure the gate admitted, for the run it was
// admitted for, if that run is still going. Called with it.mu held.
func (it *interp) takeFigure(f runner.Frame) {
	c := it.figFor
	it.figFor = nil
	if c == nil || len(f.Payload) == 0 {
		return // refused by the gate
	}
	c.figs.pending--
	if c.ended || len(f.Payload) != f.Size {
		return
	}
	// Any process in the sandbox can send a "figure": only a PNG (its
	// signature and a valid header) goes to the client as an image.
	if !validPNG(f.Payload) {
		it.figures.give(f.Size)
		c.figs.reserved -= f.Size
		c.figs.dropped++
		c.figs.forged++
		return
	}
	c.figs.figures = append(c.figs.figures, append([]byte(nil), f.Payload...))
}

// validPNG reports whether b starts with a PNG signature and a valid
// header chunk (its checksum included).
func validPNG(b []byte) bool {
	_, err := png.DecodeConfig(bytes.NewReader(b))
	return err == nil
}

// figuresDropped notes in stderr the figures a run dropped, and why.
func figuresDropped(stderr io.Writer, f figureTally, imageBytes int) {
	if f.forged > 0 {
		fmt.Fprintf(stderr, "\n[mcp-sandbox: %d figure(s) were not PNG images (no valid PNG signature and header) and were not returned]\n", f.forged)
		f.dropped -= f.forged
	}
	if f.dropped == 0 {
		return
	}
	why := fmt.Sprintf("a run returns at most %d figures and limits.image_bytes (%d bytes) of them", maxFigures, imageBytes)
	if f.busy {
		why = "the server's figure budget was in use by other calls"
	}
	fmt.Fprintf(stderr, "\n[mcp-sandbox: %d figure(s) (%d bytes) were not returned: %s]\n", f.dropped, f.droppedBytes, why)
}
