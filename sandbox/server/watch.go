package server

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// watchdogPatience bounds how long a watchdog keeps trying to remove what
// its server left when the engine does not answer (Docker Desktop
// restarting, say). Past it, the next server's start-up reaping is the
// only clean-up left.
const watchdogPatience = 5 * time.Minute

// releasedCheck bounds the one look a watchdog takes after a server that
// removed everything itself.
const releasedCheck = 10 * time.Second

// Watch is the watchdog's side of the dead man's switch: it waits until
// stdin (the pipe whose write end only its server holds) ends, which
// happens when the server's process ends in any way, then removes every
// container and volume of owner through be (connected, while the server
// lived, to the engine the server used), and returns. After a server that
// released it (it removed everything itself) it takes one look, without
// retries, and returns nil; else it logs and returns the error of
// inventory.RemoveOwner when something could not be removed. st may be nil
// (the records then stay until the next reaping).
func Watch(ctx context.Context, stdin io.Reader, be backend.Backend, st *state.Store, owner string, log *slog.Logger) error {
	// EOF, or any error: the server is gone. Nothing is logged from here
	// on unless something was left: the server's state directory may be
	// going away with it (a test's, say).
	// The first byte decides: the release, which the server writes and
	// then waits for this process to finish (it keeps the pipe open until
	// then, so waiting for EOF here would hold both), or EOF.
	var first [1]byte
	n, _ := io.ReadFull(stdin, first[:])
	released := n == 1 && first[0] == watchdogReleased
	if !released {
		_, _ = io.Copy(io.Discard, stdin)
	}
	log = log.With("by", "watchdog")
	if released {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releasedCheck)
		defer cancel()
		_, _ = inventory.RemoveOwnerOnce(rctx, be, st, owner, log)
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), watchdogPatience)
	defer cancel()
	if _, err := inventory.RemoveOwner(rctx, be, st, owner, log); err != nil {
		log.Error("watchdog: could not remove everything of the server; the next server to start reaps the rest", "err", err)
		return err
	}
	return nil
}
