package bench

import (
	"context"
	"testing"
	"time"
)

// TestProxyRound: the proxy rows measure both ways each round (the
// download checked for its length), without Docker.
func TestProxyRound(t *testing.T) {
	pb, err := startProxyBench(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	h := &Harness{proxy: pb, ours: map[string][]time.Duration{}, base: map[string][]time.Duration{}}
	defer h.Close()
	for i := 0; i < 2; i++ {
		if err := h.proxyRound(context.Background(), i%2 == 1); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range proxyNames {
		if len(h.ours[name]) != 2 || len(h.base[name]) != 2 {
			t.Errorf("%s: %d through the proxy, %d direct; want 2 each", name, len(h.ours[name]), len(h.base[name]))
		}
	}
}
