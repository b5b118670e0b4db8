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
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
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
