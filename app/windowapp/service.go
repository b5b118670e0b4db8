//go:build cgo

package windowapp

import (
	"context"
	"fmt"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// errNoDocker is the answer to a sandbox action while no engine answers.
var errNoDocker = fmt.Errorf("%w: Docker is not reachable; the Status tab says why", dockerhost.ErrNoEngine)

// errNoCluster is errNoDocker on Kubernetes.
var errNoCluster = fmt.Errorf("%w: the Kubernetes cluster is not reachable; the Status tab says why", dockerhost.ErrNoEngine)

// backend is the engine followed now, or the error that says none
// answers, in the words of the configured backend.
func (a *App) backend() (*engineconn.Conn, error) {
	if conn := a.engine.Conn(); conn != nil {
		return conn, nil
	}
	if engineconn.OnCluster(a.cfg.Current()) {
		return nil, errNoCluster
	}
	return nil, errNoDocker
}

// setPaused writes the pause flag; the tray applies it (removes the
// sandboxes and stops its HTTP server, or starts it again) and says so.
func (a *App) setPaused(ctx context.Context, paused bool) error {
	if err := a.st.SetPaused(paused); err != nil {
		a.log.Error("pause", "err", err)
		return err
	}
	a.log.Info("service", "paused", paused)
	a.update(func(s *uiState) { s.paused = paused })
	return nil
}

// stopAll removes every sandbox of this installation (warm-pool ones
// too), whichever of its servers made it.
func (a *App) stopAll(ctx context.Context) error {
	conn, err := a.backend()
	if err != nil {
		return err
	}
	_, err = engineconn.StopAll(ctx, conn.Backend, a.st, a.log)
	conn.Model.Refresh()
	return err
}

// stopOne removes one sandbox of this installation, whichever of its
// servers made it (the window lists no others).
func (a *App) stopOne(ctx context.Context, id string) error {
	conn, err := a.backend()
	if err != nil {
		return err
	}
	_, err = inventory.Stop(ctx, conn.Backend, a.st, inventory.StopRequest{ID: id})
	conn.Model.Refresh()
	if err == nil {
		a.log.Info("stopped sandbox", "id", id)
	}
	return err
}
