package trayapp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// errNoDocker is the answer to a sandbox action while no engine answers.
var errNoDocker = fmt.Errorf("%w: Docker is not reachable; the Status tab says why", dockerhost.ErrNoEngine)

func (a *App) backend() (*dockerConn, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.docker == nil {
		return nil, errNoDocker
	}
	return a.docker, nil
}

// setPaused stops or starts the service. Stopping sets the pause flag
// (servers refuse new sandboxes and stop their own at their next tick),
// removes every managed sandbox now, and stops the tray's HTTP server;
// starting clears the flag and starts the HTTP server again.
func (a *App) setPaused(ctx context.Context, paused bool) error {
	if err := a.st.SetPaused(paused); err != nil {
		a.log.Error("pause", "err", err)
		return err
	}
	a.log.Info("service", "paused", paused)
	a.update(func(s *uiState) { s.paused = paused })
	a.applyHTTP()
	if paused {
		if err := a.stopAll(ctx); err != nil && !errors.Is(err, dockerhost.ErrNoEngine) {
			return err
		}
	}
	return nil
}

// stopAll removes every managed sandbox (warm-pool ones too), whichever
// server made it.
func (a *App) stopAll(ctx context.Context) error {
	conn, err := a.backend()
	if err != nil {
		return err
	}
	list, err := conn.be.List(ctx)
	if err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := conn.be.Remove(ctx, c.ID); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
				mu.Unlock()
				return
			}
			if id := c.Labels[sandbox.LabelID]; id != "" {
				_ = a.st.RemoveRecord(id)
			}
		}()
	}
	wg.Wait()
	a.log.Info("stopped all sandboxes", "count", len(list)-len(errs), "failed", len(errs))
	conn.model.Refresh()
	return errors.Join(errs...)
}

// stopOne removes one managed sandbox, whichever server made it.
func (a *App) stopOne(ctx context.Context, id string) error {
	conn, err := a.backend()
	if err != nil {
		return err
	}
	err = sandbox.StopManaged(ctx, conn.be, a.st, id)
	conn.model.Refresh()
	if err == nil {
		a.log.Info("stopped sandbox", "id", id)
	}
	return err
}
