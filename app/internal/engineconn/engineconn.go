package engineconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Dial finds the engine by dockerhost's rule (dockerhost.NewClient, the
// same as the server's and the CLI's) and checks that it answers. When the
// explicit choice (docker.host, DOCKER_HOST, a context) does not answer,
// the error wraps dockerhost.ErrExplicitUnreachable and names it: no other
// engine is reached, so neither the tray nor the window can ever act on
// one. The Result is returned in every case.
func Dial(ctx context.Context, opts dockerhost.Options, log *slog.Logger) (*client.Client, *docker.Backend, *dockerhost.Result, error) {
	cli, res, err := dockerhost.NewClient(ctx, opts)
	if err != nil {
		return nil, nil, res, err
	}
	be := docker.New(cli, log)
	if err := be.Ping(ctx); err != nil {
		cli.Close()
		return nil, nil, res, err
	}
	return cli, be, res, nil
}

// EntryHost is the DOCKER_HOST written into client entries for the chosen
// endpoint: a plain socket, pipe or tcp:// names it fully (TLS and ssh
// need more than a host). The config's docker.host is not copied: every
// server reads the same config file.
func EntryHost(c *dockerhost.Candidate) string {
	if c == nil || c.Source == "docker.host" || c.TLS != nil || strings.HasPrefix(c.Host, "ssh://") {
		return ""
	}
	return c.Host
}

// StopAll removes every sandbox of this installation (st's: inventory.Mine),
// warm-pool ones and helpers too, whichever of its servers made it, and
// returns how many it removed, counted by sandboxwatch's rule (unclaimed
// warm-pool containers apart; helpers not at all). Other installations' sandboxes on the
// engine (other users', other state directories') are left alone: only
// `mcp-sandbox stop --all --all-users` touches them.
func StopAll(ctx context.Context, be backend.Backend, st *state.Store, log *slog.Logger) (sandboxwatch.Count, error) {
	var n sandboxwatch.Count
	inst, err := inventory.Installation(st)
	if err != nil {
		return n, err
	}
	all, err := be.List(ctx)
	if err != nil {
		return n, err
	}
	var list []backend.ContainerInfo
	for _, c := range all {
		if inventory.Mine(c.Labels, inst) {
			list = append(list, c)
		}
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
			if err := be.Remove(ctx, c.ID); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
				mu.Unlock()
				return
			}
			mu.Lock()
			switch {
			case c.Labels[backend.LabelHelper] != "":
			case inventory.UnclaimedPool(c):
				n.Warm++
			default:
				n.Sandboxes++
			}
			mu.Unlock()
			if id := c.Labels[backend.LabelID]; id != "" {
				_ = st.RemoveRecord(id)
			}
		}()
	}
	wg.Wait()
	log.Info("stopped all sandboxes", "sandboxes", n.Sandboxes, "warm", n.Warm, "failed", len(errs))
	return n, errors.Join(errs...)
}
