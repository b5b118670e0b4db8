package interp

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// scriptProc is an interpreter whose answer to each run is a script:
// the frames it writes (through the interpreter's decoder) when asked to
// run code. Code "hang" gets the frames but no done (the run ends with
// its ctx).
type scriptProc struct {
	dec   *runner.Decoder
	nonce string
	reply func(code string) [][]byte // frames before done
	done  chan struct{}
	once  sync.Once
}

func (p *scriptProc) Write(b []byte) (int, error) {
	head, payload, _ := strings.Cut(string(b), "\n")
	if !strings.HasSuffix(strings.Fields(head)[1], runner.KindRun) {
		return len(b), nil
	}
	var req runner.RunRequest
	if err := json.Unmarshal([]byte(payload), &req); err != nil {
		panic(err)
	}
	for _, f := range p.reply(req.Code) {
		_, _ = p.dec.Write(f)
	}
	if req.Code != "hang" {
		d, _ := json.Marshal(runner.Done{ID: req.ID})
		_, _ = p.dec.Write(runner.AppendFrame(nil, p.nonce, runner.KindDone, d))
	}
	return len(b), nil
}

func (p *scriptProc) Done() <-chan struct{}   { return p.done }
func (p *scriptProc) PID(context.Context) int { return 2 }
func (p *scriptProc) Wait(context.Context) (backend.ExecStatus, error) {
	return backend.ExecStatus{ExitCode: 137}, nil
}
func (p *scriptProc) Kill(context.Context) error { return p.Close() }
func (p *scriptProc) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// scriptedInterp returns an interpreter answering with reply, whose
// figures are taken from budget.
func scriptedInterp(budget *Budget, reply func(code string) [][]byte) *interp {
	it := newInterp("python", budget)
	p := &scriptProc{nonce: it.nonce, reply: reply, done: make(chan struct{})}
	p.dec = it.decoder()
	it.proc = p
	return it
}

// figs returns n fig frames of size bytes each: a PNG's signature and
// header, padded (cut, under 33 bytes).
func figs(nonce string, n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = runner.AppendFrame(nil, nonce, runner.KindFig, pngOf(size))
	}
	return out
}

// pngOf is a PNG signature and header (of a 1×1 grey image) padded or
// cut to size bytes.
func pngOf(size int) []byte {
	ihdr := []byte{0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0}
	b := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), ihdr...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(append([]byte("IHDR"), ihdr...)))
	b = append(b, strings.Repeat("p", max(0, size-len(b)))...)
	return b[:size]
}

// The budget arithmetic of one run: what it keeps and drops, by count,
// by limits.image_bytes and by the server-wide budget, and what goes
// back to that budget.
func TestFigureBudgetPerRun(t *testing.T) {
	for _, tc := range []struct {
		name                string
		server, image       int
		n, size             int
		kept, dropped       int
		droppedBytes        int64
		busy                bool
		reservedAfterTheRun int
	}{
		{"all fit", 10000, 1000, 3, 300, 3, 0, 0, false, 900},
		{"over image_bytes", 10000, 1000, 3, 400, 2, 1, 400, false, 800},
		{"one larger than image_bytes", 10000, 1000, 1, 1001, 0, 1, 1001, false, 0},
		{"over the count", 10000, 1000, maxFigures + 4, 40, maxFigures, 4, 160, false, maxFigures * 40},
		{"over the server's budget", 500, 1000, 3, 200, 2, 1, 200, true, 400},
		{"no figures allowed", 10000, 0, 2, 10, 0, 2, 20, false, 0},
		{"empty figures", 10000, 1000, 2, 0, 0, 2, 0, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBudget(int64(tc.server))
			var it *interp
			it = scriptedInterp(b, func(string) [][]byte { return figs(it.nonce, tc.n, tc.size) })
			r := it.run(context.Background(), "plot", newBuffer(1024), newBuffer(1024), tc.image)
			f := r.figs
			got := fmt.Sprint(len(f.figures), f.dropped, f.droppedBytes, f.busy, f.reserved)
			want := fmt.Sprint(tc.kept, tc.dropped, tc.droppedBytes, tc.busy, tc.reservedAfterTheRun)
			if got != want {
				t.Errorf("kept, dropped, bytes dropped, busy, reserved = %s; want %s", got, want)
			}
			b.give(f.reserved)
			if !b.take(tc.server) {
				t.Errorf("the budget did not get all its bytes back")
			}
		})
	}
}

// Concurrent runs share the server-wide budget: what one run holds until
// its result is released is not there for another, which drops its
// figures (truncation, not an error or a wait); once released it is.
func TestFigureBudgetAcrossRuns(t *testing.T) {
	b := NewBudget(1000)
	var a, c *interp
	a = scriptedInterp(b, func(string) [][]byte { return figs(a.nonce, 3, 300) })
	c = scriptedInterp(b, func(string) [][]byte { return figs(c.nonce, 2, 300) })
	ctx := context.Background()
	first := a.run(ctx, "plot", newBuffer(1024), newBuffer(1024), 1000)
	second := c.run(ctx, "plot", newBuffer(1024), newBuffer(1024), 1000)
	if len(first.figs.figures) != 3 || len(second.figs.figures) != 0 || second.figs.dropped != 2 || !second.figs.busy {
		t.Fatalf("first kept %d, second kept %d dropped %d busy %v; want 3, 0, 2, true",
			len(first.figs.figures), len(second.figs.figures), second.figs.dropped, second.figs.busy)
	}
	b.give(first.figs.reserved)
	third := c.run(ctx, "plot", newBuffer(1024), newBuffer(1024), 1000)
	if len(third.figs.figures) != 2 {
		t.Errorf("after the release the next run kept %d figures, want 2", len(third.figs.figures))
	}
	b.give(third.figs.reserved)
	if !b.take(1000) {
		t.Errorf("the budget did not get all its bytes back")
	}
}

// A run that does not end with done (cancelled here) gives its figures'
// bytes back at once; figures sent between runs are never kept.
func TestFigureBudgetGivenBackWhenRunEnds(t *testing.T) {
	b := NewBudget(1000)
	var it *interp
	it = scriptedInterp(b, func(string) [][]byte { return figs(it.nonce, 2, 300) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := it.run(ctx, "hang", newBuffer(1024), newBuffer(1024), 1000)
	if !r.killed || r.figs.reserved != 0 || len(r.figs.figures) != 0 {
		t.Errorf("killed %v, reserved %d, figures %d; want true, 0, 0", r.killed, r.figs.reserved, len(r.figs.figures))
	}
	// Between runs: a background process's figure.
	it2 := scriptedInterp(b, nil)
	_, _ = it2.proc.(*scriptProc).dec.Write(figs(it2.nonce, 1, 900)[0])
	if !b.take(1000) {
		t.Errorf("the budget did not get all its bytes back")
	}
}

// A frame over runner.MaxPayload (other than a figure) breaks the
// protocol: the run ends and the interpreter is given up.
func TestOversizedFrameBreaksInterpreter(t *testing.T) {
	b := NewBudget(1000)
	var it *interp
	it = scriptedInterp(b, func(string) [][]byte {
		return [][]byte{[]byte(fmt.Sprintf("%s %s %d\n", it.nonce, runner.KindOut, runner.MaxPayload+1))}
	})
	r := it.run(context.Background(), "hang", newBuffer(1024), newBuffer(1024), 1000)
	if r.broken == nil {
		t.Errorf("an oversized frame did not break the protocol: %+v", r)
	}
}

// A "figure" that is not a PNG (no signature, a forged header, a cut
// one) is dropped with a note, its bytes given back at once; a real
// one beside it is kept.
func TestFigureNotPNGDropped(t *testing.T) {
	b := NewBudget(1 << 20)
	bad := pngOf(100)
	bad[20]++ // the header no longer matches its checksum
	var it *interp
	it = scriptedInterp(b, func(string) [][]byte {
		return [][]byte{
			runner.AppendFrame(nil, it.nonce, runner.KindFig, []byte(strings.Repeat("p", 4000))),
			runner.AppendFrame(nil, it.nonce, runner.KindFig, bad),
			runner.AppendFrame(nil, it.nonce, runner.KindFig, pngOf(20)),
			runner.AppendFrame(nil, it.nonce, runner.KindFig, pngOf(100)),
		}
	})
	r := it.run(context.Background(), "plot", newBuffer(1024), newBuffer(1024), 1<<20)
	f := r.figs
	if len(f.figures) != 1 || f.forged != 3 || f.dropped != 3 || f.reserved != 100 {
		t.Fatalf("kept %d, forged %d, dropped %d, reserved %d; want 1, 3, 3, 100", len(f.figures), f.forged, f.dropped, f.reserved)
	}
	stderr := newBuffer(1024)
	figuresDropped(stderr, f, 1<<20)
	if got := stderr.String(); !strings.Contains(got, "3 figure(s) were not PNG images") || strings.Contains(got, "were not returned:") {
		t.Errorf("the note: %q", got)
	}
}
