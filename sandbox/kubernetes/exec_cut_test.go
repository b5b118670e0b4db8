package kubernetes

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A cut stream that returns is waited for; one that does not (client-go's
// stream blocked on its stdin) holds the call streamCutGrace at most, and
// says so in the log.
func TestAwaitCutBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		b := &Backend{log: slog.New(slog.NewTextHandler(&logs, nil))}
		ended := make(chan error, 1)
		go func() { time.Sleep(time.Second); ended <- nil }()
		start := time.Now()
		b.awaitCut(ended, "pod-a")
		if d := time.Since(start); d != time.Second || logs.Len() != 0 {
			t.Errorf("a stream that ended after 1s held the call %v, logged %q", d, logs.String())
		}
		stuck := make(chan error, 1)
		start = time.Now()
		b.awaitCut(stuck, "pod-b")
		if d := time.Since(start); d != streamCutGrace {
			t.Errorf("a stuck stream held the call %v, want %v", d, streamCutGrace)
		}
		if !strings.Contains(logs.String(), "did not end when cut") || !strings.Contains(logs.String(), "pod-b") {
			t.Errorf("log %q does not say the stream was left", logs.String())
		}
	})
}
