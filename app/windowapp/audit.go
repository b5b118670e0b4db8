//go:build cgo

package windowapp

import (
	"context"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
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
	ctx, cancel := context.WithCancel(a.ctx)
	a.audit = &auditWatch{cancel: cancel}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		err := dirwatch.Watch(ctx, a.st.Dir(), 200*time.Millisecond, func() { a.do(a.win.Activity.Reload) }, "audit.jsonl")
		if err != nil {
			a.log.Warn("watch the audit log", "err", err)
		}
	}()
}
