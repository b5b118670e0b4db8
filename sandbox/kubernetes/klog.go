package kubernetes

import (
	"context"
	"log/slog"

	"k8s.io/klog/v2"
)

// quietKlog sends client-go's own log lines (klog: mostly a stream's
// goroutines noting a connection the backend closed on purpose) to log at
// debug level, instead of the process's stderr.
func quietKlog(log *slog.Logger) {
	klog.SetSlogLogger(slog.New(debugHandler{log.Handler()}))
}

// debugHandler logs every record at debug level.
type debugHandler struct{ h slog.Handler }

func (d debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugHandler) WithAttrs(a []slog.Attr) slog.Handler { return debugHandler{d.h.WithAttrs(a)} }
func (d debugHandler) WithGroup(n string) slog.Handler      { return debugHandler{d.h.WithGroup(n)} }
