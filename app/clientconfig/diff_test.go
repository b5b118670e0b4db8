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
