package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want Stats
	}{
		{"empty", nil, Stats{}},
		{"one", ms(7), Stats{N: 1, Median: 7 * time.Millisecond, P95: 7 * time.Millisecond, Min: 7 * time.Millisecond, Max: 7 * time.Millisecond}},
		{"odd, unsorted", ms(5, 1, 3), Stats{N: 3, Median: 3 * time.Millisecond, P95: 5 * time.Millisecond, Min: time.Millisecond, Max: 5 * time.Millisecond}},
		{"even", ms(1, 2, 3, 4), Stats{N: 4, Median: 2500 * time.Microsecond, P95: 4 * time.Millisecond, Min: time.Millisecond, Max: 4 * time.Millisecond}},
		{"twenty", ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1), Stats{N: 20, Median: 10500 * time.Microsecond, P95: 19 * time.Millisecond, Min: time.Millisecond, Max: 20 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(tc.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if r := ratio(time.Second, 0); r != 0 {
		t.Errorf("ratio over zero = %v", r)
	}
}
