package bench

import (
	"slices"
	"time"
)

// Stats summarises one series of timings.
type Stats struct {
	N      int           `json:"n"`
	Median time.Duration `json:"median_ns"`
	P95    time.Duration `json:"p95_ns"`
	Min    time.Duration `json:"min_ns"`
	Max    time.Duration `json:"max_ns"`
}

// summarize returns the statistics of samples (nearest-rank percentiles).
func summarize(samples []time.Duration) Stats {
	if len(samples) == 0 {
		return Stats{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return Stats{N: len(s), Median: percentile(s, 50), P95: percentile(s, 95), Min: s[0], Max: s[len(s)-1]}
}

// percentile returns the p-th percentile of sorted s by the nearest-rank
// method (the median of an even count is the mean of the middle two).
func percentile(s []time.Duration, p int) time.Duration {
	if p == 50 && len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	rank := (p*len(s) + 99) / 100 // ceil(p/100 * n)
	return s[min(max(rank, 1), len(s))-1]
}

// ratio is a/b, or 0 when b is 0.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
