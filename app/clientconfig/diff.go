package clientconfig

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffContext is how many unchanged lines surround each change.
const diffContext = 3

type diffOp struct {
	kind byte // ' ', '-' or '+'
	line string
}

// unifiedDiff returns the change from old to new as a unified diff, as
// shown by a dry run.
func unifiedDiff(path string, old, new []byte, created bool) string {
	a, b := splitLines(string(old)), splitLines(string(new))
	ops := diffLines(a, b)
	var out strings.Builder
	if created {
		out.WriteString("--- /dev/null\n")
	} else {
		out.WriteString("--- " + path + "\n")
	}
	out.WriteString("+++ " + path + "\n")
	// aAt[i] and bAt[i] count the old and new lines before ops[i].
	aAt, bAt := make([]int, len(ops)+1), make([]int, len(ops)+1)
	for i, op := range ops {
		aAt[i+1], bAt[i+1] = aAt[i], bAt[i]
		if op.kind != '+' {
			aAt[i+1]++
		}
		if op.kind != '-' {
			bAt[i+1]++
		}
	}
	for i := 0; i < len(ops); {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-diffContext)
		end := i
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			k := end
			for k < len(ops) && ops[k].kind == ' ' && k-end < 2*diffContext {
				k++
			}
			if k < len(ops) && ops[k].kind != ' ' {
				end = k
				continue
			}
			break
		}
		stop := min(len(ops), end+diffContext)
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aAt[start], aAt[stop]-aAt[start]), hunkRange(bAt[start], bAt[stop]-bAt[start]))
		for _, op := range ops[start:stop] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return out.String()
}

func hunkRange(before, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", before)
	}
	if n == 1 {
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}

// splitLines splits s into lines that keep their line breaks, so that a
// last line without one differs from the same line with one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns an edit script from a to b, computed by
// diff-match-patch's line mode (Myers' algorithm), with each run of changes
// written as its removals and then its additions, as diff(1) does.
func diffLines(a, b []string) []diffOp {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // an exact diff, not one cut short by the clock
	ra, rb, table := dmp.DiffLinesToRunes(strings.Join(a, ""), strings.Join(b, ""))
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), table)
	var ops, adds []diffOp
	for _, d := range diffs {
		for _, l := range splitLines(d.Text) {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				ops = append(ops, adds...)
				adds = adds[:0]
				ops = append(ops, diffOp{' ', l})
			case diffmatchpatch.DiffDelete:
				ops = append(ops, diffOp{'-', l})
			case diffmatchpatch.DiffInsert:
				adds = append(adds, diffOp{'+', l})
			}
		}
	}
	return append(ops, adds...)
}
