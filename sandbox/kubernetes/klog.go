package kubernetes

import (
	"context"
	"log/slog"
	"sync/atomic"

	"k8s.io/klog/v2"
)

// klogTo is the logger client-go's own log lines (klog: mostly a stream's
// goroutines noting a connection the backend closed on purpose) go to, at
// debug level: the latest Backend's, else none. klog's logger is set once,
// at init (setting it races with logging), to a handler that reads klogTo.
var klogTo atomic.Pointer[slog.Logger]

func init() {
	klog.SetSlogLogger(slog.New(debugHandler{}))
}

// quietKlog sends klog's lines to log.
func quietKlog(log *slog.Logger) { klogTo.Store(log) }

// debugHandler logs every record at debug level to klogTo, with the
// attributes and groups klog added.
type debugHandler struct {
	with func(slog.Handler) slog.Handler
}

func (d debugHandler) target() slog.Handler {
	l := klogTo.Load()
	if l == nil {
		return nil
	}
	h := l.Handler()
	if d.with != nil {
		h = d.with(h)
	}
	return h
}

func (d debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	h := d.target()
	return h != nil && h.Enabled(ctx, slog.LevelDebug)
}

func (d debugHandler) Handle(ctx context.Context, r slog.Record) error {
	h := d.target()
	if h == nil {
		return nil
	}
	r.Level = slog.LevelDebug
	return h.Handle(ctx, r)
}

func (d debugHandler) WithAttrs(a []slog.Attr) slog.Handler {
	prev := d.with
	return debugHandler{with: func(h slog.Handler) slog.Handler {
		if prev != nil {
			h = prev(h)
		}
		return h.WithAttrs(a)
	}}
}

func (d debugHandler) WithGroup(n string) slog.Handler {
	prev := d.with
	return debugHandler{with: func(h slog.Handler) slog.Handler {
		if prev != nil {
			h = prev(h)
		}
		return h.WithGroup(n)
	}}
}
