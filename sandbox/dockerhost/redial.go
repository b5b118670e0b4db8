package dockerhost

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"
)

// Redialer keeps a client on a local engine usable when the engine moves:
// Docker Desktop or Colima started after the server, or restarted on
// another socket. Its dial function connects to the current socket; when
// that fails it runs detection again (at most every MinInterval) and, if a
// local socket answers now, switches to it.
//
// AI clients start the server once, often before Docker is up; without
// this, a server that found nothing at start would stay broken until the
// client is restarted.
type Redialer struct {
	// Detect finds the engine; it is Detect with the server's options.
	Detect func(ctx context.Context) *Result
	// MinInterval bounds how often detection runs (default 5s).
	MinInterval time.Duration

	mu   sync.Mutex
	path string // current socket path
	last time.Time
}

// NewRedialer starts from host (a unix:// endpoint, or "" for none yet).
func NewRedialer(host string, detect func(ctx context.Context) *Result) *Redialer {
	return &Redialer{Detect: detect, path: strings.TrimPrefix(host, "unix://")}
}

// Path returns the socket currently dialled ("" when none is known).
func (r *Redialer) Path() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.path
}

// DialContext connects to the current socket, re-detecting once when that
// fails. It ignores network and addr: the client's host only names the
// scheme.
func (r *Redialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	p := r.Path()
	if p != "" {
		c, err := d.DialContext(ctx, "unix", p)
		if err == nil {
			return c, nil
		}
		if !r.redetect(ctx) {
			return nil, err
		}
	} else if !r.redetect(ctx) {
		return nil, &net.OpError{Op: "dial", Net: "unix", Err: errNoEngineYet}
	}
	return d.DialContext(ctx, "unix", r.Path())
}

var errNoEngineYet = &noEngineError{}

type noEngineError struct{}

func (*noEngineError) Error() string { return "no Docker engine answered" }

// redetect runs detection if the last run is old enough and switches to a
// local socket that answers; it reports whether the socket changed.
func (r *Redialer) redetect(ctx context.Context) bool {
	interval := r.MinInterval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	r.mu.Lock()
	if time.Since(r.last) < interval {
		r.mu.Unlock()
		return false
	}
	r.last = time.Now()
	old := r.path
	r.mu.Unlock()

	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res := r.Detect(dctx)
	if res == nil || res.Chosen == nil || !strings.HasPrefix(res.Chosen.Host, "unix://") {
		return false
	}
	p := strings.TrimPrefix(res.Chosen.Host, "unix://")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.path = p
	return p != old
}

// ClientOptions builds a client that dials through the redialer.
func (r *Redialer) ClientOptions() []client.Opt {
	return []client.Opt{
		client.WithHost("unix:///var/run/docker.sock"), // the scheme; the path is the redialer's
		client.WithDialContext(r.DialContext),
		client.WithAPIVersionNegotiation(),
	}
}
