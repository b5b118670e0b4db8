package output

import (
	"strings"
	"testing"
)

// A call's stdout and stderr return at most the limit together: a stream
// within half of it keeps all of its output and the other the rest; two
// large ones get half each. Each cut stream says so in one line.
func TestCapturesShareTheLimit(t *testing.T) {
	const limit = 1024
	for _, tc := range []struct {
		out, err         int
		wantOut, wantErr int // bytes of output kept
	}{
		{100, 200, 100, 200},
		{5000, 100, limit - 100, 100},
		{100, 5000, 100, limit - 100},
		{5000, 5000, limit / 2, limit / 2},
		{700, 700, limit / 2, limit / 2},
	} {
		stdout, stderr := NewPair(limit, nil, nil, nil)
		_, _ = stdout.Write([]byte(strings.Repeat("o", tc.out)))
		_, _ = stderr.Write([]byte(strings.Repeat("e", tc.err)))
		for _, s := range []struct {
			c           *Capture
			ch          string
			total, want int
		}{{stdout, "o", tc.out, tc.wantOut}, {stderr, "e", tc.err, tc.wantErr}} {
			got := s.c.String()
			kept := got
			if i := strings.Index(got, "\n[... "); i >= 0 {
				j := strings.Index(got[i+1:], "\n")
				kept = got[:i] + got[i+1+j+1:]
			}
			if n := strings.Count(kept, s.ch); n != s.want || len(kept) != n {
				t.Errorf("%d+%d bytes: %s kept %d, want %d", tc.out, tc.err, s.ch, n, s.want)
			}
			if cut := s.want < s.total; s.c.Truncated() != cut || strings.Count(got, "omitted") != map[bool]int{true: 1}[cut] {
				t.Errorf("%d+%d bytes: %s truncated %v, note %q; want cut %v", tc.out, tc.err, s.ch, s.c.Truncated(), got, cut)
			}
		}
	}
}
