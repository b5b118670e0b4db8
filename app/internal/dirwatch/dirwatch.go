package dirwatch

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch watches dir until ctx is done. When any file called one of names
// (any file at all, without names) is created, written, renamed or removed, it waits settle (later events
// inside that time join the same call) and calls changed, on Watch's own
// goroutine. It returns an error when the watch cannot start, else nil once
// ctx is done.
func Watch(ctx context.Context, dir string, settle time.Duration, changed func(), names ...string) error {
	w, err := start(dir)
	if err != nil {
		return err
	}
	follow(ctx, w, settle, changed, names)
	return nil
}

// start watches dir.
func start(dir string) (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	return w, nil
}

// follow is Watch's loop over a started watch, which it closes.
func follow(ctx context.Context, w *fsnotify.Watcher, settle time.Duration, changed func(), names []string) {
	defer w.Close()
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if due == nil && (len(names) == 0 || slices.Contains(names, filepath.Base(ev.Name))) {
				due = time.After(settle)
			}
		case <-w.Errors:
		case <-due:
			due = nil
			changed()
		}
	}
}
