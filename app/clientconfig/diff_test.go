package clientconfig

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnifiedDiff(t *testing.T) {
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "l%d\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name     string
		old, new string
		created  bool
		want     string
	}{
		{
			name: "new file", new: "a\nb\n", created: true,
			want: "--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+a\n+b\n",
		},
		{
			name: "one line changed in the middle",
			old:  lines(1, 9), new: strings.Replace(lines(1, 9), "l5\n", "five\n", 1),
			want: "--- f\n+++ f\n@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+five\n l6\n l7\n l8\n",
		},
		{
			name: "two changes far apart make two hunks",
			old:  lines(1, 20), new: strings.Replace(strings.Replace(lines(1, 20), "l2\n", "", 1), "l19\n", "l19\nnew\n", 1),
			want: "--- f\n+++ f\n@@ -1,5 +1,4 @@\n l1\n-l2\n l3\n l4\n l5\n@@ -17,4 +16,5 @@\n l17\n l18\n l19\n+new\n l20\n",
		},
		{
			name: "two changes close together make one hunk",
			old:  lines(1, 12), new: strings.Replace(strings.Replace(lines(1, 12), "l3\n", "x\n", 1), "l9\n", "y\n", 1),
			want: "--- f\n+++ f\n@@ -1,12 +1,12 @@\n l1\n l2\n-l3\n+x\n l4\n l5\n l6\n l7\n l8\n-l9\n+y\n l10\n l11\n l12\n",
		},
		{
			name: "no newline at end",
			old:  "{}", new: "{\n  \"a\": 1\n}",
			want: "--- f\n+++ f\n@@ -1 +1,3 @@\n-{}\n\\ No newline at end of file\n+{\n+  \"a\": 1\n+}\n\\ No newline at end of file\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unifiedDiff("f", []byte(tt.old), []byte(tt.new), tt.created)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unifiedDiff (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiffLinesRebuilds: for edits all over a file, the script's kept and
// removed lines give the old file and its kept and added lines the new
// one, and every run of changes lists its removals first.
func TestDiffLinesRebuilds(t *testing.T) {
	var a []string
	for i := range 300 {
		a = append(a, fmt.Sprintf("line %d\n", i%37))
	}
	for step := 1; step < 40; step += 7 {
		var b []string
		for i, l := range a {
			switch {
			case i%step == 0:
				b = append(b, "changed\n")
			case i%(step+3) == 0: // dropped
			default:
				b = append(b, l)
			}
		}
		b[len(b)-1] = "no newline"
		var gotA, gotB []string
		ops := diffLines(a, b)
		for i, op := range ops {
			if op.kind != '+' {
				gotA = append(gotA, op.line)
			}
			if op.kind != '-' {
				gotB = append(gotB, op.line)
			}
			if op.kind == '-' && i > 0 && ops[i-1].kind == '+' {
				t.Fatalf("step %d: a removal after an addition at op %d", step, i)
			}
		}
		if diff := cmp.Diff(a, gotA); diff != "" {
			t.Errorf("step %d: old side (-want +got):\n%s", step, diff)
		}
		if diff := cmp.Diff(b, gotB); diff != "" {
			t.Errorf("step %d: new side (-want +got):\n%s", step, diff)
		}
	}
}
