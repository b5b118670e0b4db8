package windowapp

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// auditWatch reloads the Activity tab when a server appends to the audit
// log, while the tab is in view.
type auditWatch struct {
	cancel context.CancelFunc
}

// watchAudit starts or stops watching. UI goroutine only.
func (a *App) watchAudit(on bool) {
	if !on {
		if a.audit != nil {
			a.audit.cancel()
			a.audit = nil
		}
		return
	}
	if a.audit != nil {
		return
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		a.log.Warn("watch the audit log", "err", err)
		return
	}
	if err := w.Add(a.st.Dir()); err != nil {
		w.Close()
		a.log.Warn("watch the audit log", "err", err)
		return
	}
	ctx, cancel := context.WithCancel(a.ctx)
	a.audit = &auditWatch{cancel: cancel}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer w.Close()
		var debounce <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == "audit.jsonl" && debounce == nil {
					debounce = time.After(200 * time.Millisecond)
				}
			case <-w.Errors:
			case <-debounce:
				debounce = nil
				a.do(a.win.Activity.Reload)
			}
		}
	}()
}
