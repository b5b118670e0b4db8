package proposal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Bounds on one file's diff, so that a hostile pair of files costs bounded
// time and memory: past maxDiffLines lines on a side, or an edit distance
// past maxEdits, the diff says "file replaced" with the line counts.
const (
	maxDiffLines = 50000
	maxEdits     = 1500
	// maxSteps bounds the comparisons of one diff (about 0.1 s): Myers'
	// time is O((N+M)·D), which long runs of equal lines between edits
	// can push to the whole product.
	maxSteps = 20_000_000
	// maxDiffBytes bounds one file's diff text; the rest is cut.
	maxDiffBytes = 64 << 10
	contextLines = 3
)

// FileDiff is what changed in one file.
type FileDiff struct {
	Added, Removed int
	// Text is the unified diff's hunks (no ---/+++ header), a "binary
	// file" line, or "file replaced: N → M lines".
	Text string
}

// Diff compares old and new: a unified diff with 3 lines of context for
// text, sizes and sha256 for binary files.
func Diff(old, new []byte) FileDiff {
	if isBinary(old) || isBinary(new) {
		return FileDiff{Text: fmt.Sprintf("binary file: %d → %d bytes, sha256 %s → %s\n", len(old), len(new), shortHash(old), shortHash(new))}
	}
	a, b := splitLines(old), splitLines(new)
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		return replaced(len(a), len(b))
	}
	ops, ok := editScript(a, b)
	if !ok {
		return replaced(len(a), len(b))
	}
	d := FileDiff{}
	for _, o := range ops {
		switch o.kind {
		case opDel:
			d.Removed++
		case opIns:
			d.Added++
		}
	}
	d.Text = unified(a, b, ops)
	return d
}

func replaced(n, m int) FileDiff {
	return FileDiff{Added: m, Removed: n, Text: fmt.Sprintf("file replaced: %d → %d lines (too different to diff)\n", n, m)}
}

func shortHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// isBinary is git's rule: a NUL byte in the first 8000 bytes.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// splitLines splits b into lines that keep their "\n"; the last one may
// have none.
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

type opKind uint8

const (
	opEq opKind = iota
	opDel
	opIns
)

// op is one step of an edit script: a line of a kept (opEq), of a only
// (opDel) or of b only (opIns).
type op struct {
	kind opKind
	a, b int // indexes in a and b (the one that applies)
}

// editScript is Myers' O((N+M)D) algorithm on lines numbered by content,
// after the common prefix and suffix are taken off; false when the edit
// distance passes maxEdits (its trace would take O(D²) memory) or the
// search maxSteps.
func editScript(a, b []string) ([]op, bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ids := map[string]int32{}
	number := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	mid, ok := myers(number(a[pre:len(a)-suf]), number(b[pre:len(b)-suf]))
	if !ok {
		return nil, false
	}
	ops := make([]op, 0, pre+len(mid)+suf)
	for i := 0; i < pre; i++ {
		ops = append(ops, op{opEq, i, i})
	}
	for _, o := range mid {
		ops = append(ops, op{o.kind, o.a + pre, o.b + pre})
	}
	for i := 0; i < suf; i++ {
		ops = append(ops, op{opEq, len(a) - suf + i, len(b) - suf + i})
	}
	return ops, true
}

// myers returns a shortest edit script from a to b.
func myers(a, b []int32) ([]op, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 { // all inserted or all removed: no search
		var ops []op
		for i := range n {
			ops = append(ops, op{opDel, i, 0})
		}
		for j := range m {
			ops = append(ops, op{opIns, 0, j})
		}
		return ops, true
	}
	max := n + m
	off := max + 1
	v := make([]int32, 2*max+3)
	var trace [][]int32
	steps := 0
	for d := 0; d <= max; d++ {
		if d > maxEdits {
			return nil, false
		}
		if steps += d + 1; steps > maxSteps {
			return nil, false
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
			y := x - k
			x0 := x
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			steps += x - x0
			v[off+k] = int32(x)
			if x >= n && y >= m {
				return backtrack(trace, n, m, d), true
			}
		}
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
	}
	return nil, false
}

// backtrack walks the trace from (n, m) back to (0, 0); trace[d] holds
// the furthest x on diagonals -d..d after step d.
func backtrack(trace [][]int32, n, m, dEnd int) []op {
	var rev []op
	x, y := n, m
	for d := dEnd; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return int(prev[k+d-1]) }
		k := x - y
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, op{opEq, x, y})
		}
		if pk == k+1 {
			y--
			rev = append(rev, op{opIns, x, y})
		} else {
			x--
			rev = append(rev, op{opDel, x, y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, op{opEq, x, y})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// unified writes the hunks of ops as diff -u does, cut at maxDiffBytes.
func unified(a, b []string, ops []op) string {
	var sb strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].kind == opEq {
			i++
			continue
		}
		start := max(i-contextLines, 0)
		end := hunkEnd(ops, i)
		writeHunk(&sb, a, b, ops[start:end])
		if sb.Len() > maxDiffBytes {
			s := sb.String()[:maxDiffBytes]
			if j := strings.LastIndexByte(s, '\n'); j >= 0 {
				s = s[:j+1]
			}
			return s + "… diff cut at 64 KiB\n"
		}
		i = end
	}
	return sb.String()
}

// hunkEnd returns the end of the hunk whose first change is at i: changes
// closer than 2×context lines join it, and 3 lines of context close it.
func hunkEnd(ops []op, i int) int {
	last := i
	for j := i; j < len(ops); j++ {
		if ops[j].kind != opEq {
			last = j
			continue
		}
		if j-last > 2*contextLines {
			break
		}
	}
	return min(last+1+contextLines, len(ops))
}

func writeHunk(sb *strings.Builder, a, b []string, h []op) {
	as, bs, an, bn := -1, -1, 0, 0
	for _, o := range h {
		if o.kind != opIns {
			if as < 0 {
				as = o.a
			}
			an++
		}
		if o.kind != opDel {
			if bs < 0 {
				bs = o.b
			}
			bn++
		}
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(as, an, h[0].a), hunkRange(bs, bn, h[0].b))
	for _, o := range h {
		switch o.kind {
		case opEq:
			writeLine(sb, ' ', a[o.a])
		case opDel:
			writeLine(sb, '-', a[o.a])
		case opIns:
			writeLine(sb, '+', b[o.b])
		}
	}
}

// hunkRange is "start,count" (1-based) as diff -u prints it: ",1" left
// out; an empty range names the line before it.
func hunkRange(start, n, at int) string {
	switch {
	case n == 0:
		return fmt.Sprintf("%d,0", at)
	case n == 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func writeLine(sb *strings.Builder, mark byte, l string) {
	sb.WriteByte(mark)
	sb.WriteString(l)
	if !strings.HasSuffix(l, "\n") {
		sb.WriteString("\n\\ No newline at end of file\n")
	}
}
