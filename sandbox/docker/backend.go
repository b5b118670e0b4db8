package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Backend runs sandboxes on a Docker Engine.
type Backend struct {
	cli      *client.Client
	log      *slog.Logger
	host     string
	hostName func() string
	advice   func() string

	mu      sync.Mutex
	samples map[string]cpuSample // previous CPU sample per container

	archMu sync.Mutex
	arch   string // EngineArch's answer, once known

	factsMu sync.Mutex
	known   *engineFacts  // what /version said, once it has
	asking  chan struct{} // closed when the question in flight is answered
	askErr  error         // why the last question failed
}

var (
	_ backend.Backend        = (*Backend)(nil)
	_ backend.RuntimeChecker = (*Backend)(nil)
	_ backend.Inspector      = (*Backend)(nil)
)

// New returns a backend over cli. The caller owns cli and closes it.
func New(cli *client.Client, log *slog.Logger) *Backend {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Backend{cli: cli, log: log, host: cli.DaemonHost(), samples: map[string]cpuSample{}}
}

// Client returns the underlying Docker client.
func (b *Backend) Client() *client.Client { return b.cli }

// Host returns the engine endpoint, e.g. unix:///var/run/docker.sock.
func (b *Backend) Host() string {
	if b.hostName != nil {
		if h := b.hostName(); h != "" {
			return h
		}
	}
	return b.host
}

// SetHostName tells the backend how to name its endpoint in messages when
// the client dials through something that can move (a Redialer).
func (b *Backend) SetHostName(f func() string) { b.hostName = f }

// SetAdvice tells the backend what to advise when the engine does not
// answer, in place of "is Docker Desktop, Colima or the docker service
// running?": for an explicitly chosen endpoint, start that engine or give
// up the choice, never another engine.
func (b *Backend) SetAdvice(f func() string) { b.advice = f }

// Ping checks that the engine answers, and returns an error that says what
// to do when it does not.
func (b *Backend) Ping(ctx context.Context) error {
	if _, err := b.cli.Ping(ctx); err != nil {
		return b.wrap("reach Docker", err)
	}
	return nil
}

// RuntimeRegistered reports whether the engine knows an OCI runtime by name.
func (b *Backend) RuntimeRegistered(ctx context.Context, name string) (bool, error) {
	info, err := b.cli.Info(ctx)
	if err != nil {
		return false, b.wrap("read engine info", err)
	}
	_, ok := info.Runtimes[name]
	return ok, nil
}

// wrap classifies an engine error: an unreachable engine becomes
// backend.ErrDockerUnreachable with advice, everything else keeps its class.
func (b *Backend) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if isUnreachable(err) {
		advice := "is Docker Desktop, Colima or the docker service running?"
		if b.advice != nil {
			if a := b.advice(); a != "" {
				advice = a + "."
			}
		}
		return fmt.Errorf("%s: %w: Docker is not reachable at %s: %v — %s `mcp-sandbox doctor` tells more",
			op, backend.ErrDockerUnreachable, b.Host(), err, advice)
	}
	return fmt.Errorf("%s: %w", op, err)
}

func isUnreachable(err error) bool {
	if client.IsErrConnectionFailed(err) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	if cerrdefs.IsUnavailable(err) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "Cannot connect to the Docker daemon") || strings.Contains(s, "connection refused") || strings.Contains(s, "no such file or directory") && strings.Contains(s, ".sock")
}
