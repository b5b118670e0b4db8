package dockerhost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"

	"github.com/docker/docker/client"
)

// Conn is a Docker client for a process that must start whatever Detect
// finds and keep working as engines come and go: the MCP server. Its calls
// follow the same rule as Detect: an explicit choice is the only endpoint
// it ever dials; without one, it dials what detection finds, and a local
// engine that starts later is found again through a Redialer.
type Conn struct {
	// Client is the Docker client; the caller closes it.
	Client *client.Client
	// Result is what detection found at start.
	Result *Result

	redial *Redialer
}

// Connect detects the endpoint and returns a client for it that a server
// can start with even when nothing answers, so that each call can say what
// to do. With an explicit choice the client dials that endpoint and nothing
// else, answering or not; one that cannot be read (a bad host) gives a
// client whose every call fails with why. Without one, a local socket, or
// nothing yet, is dialled through a Redialer that re-detects by the same
// rule; another endpoint that answered is dialled as is.
func Connect(ctx context.Context, opts Options) (*Conn, error) {
	r := Detect(ctx, opts)
	c := &Conn{Result: r}
	var copts []client.Opt
	switch ex, local := r.Explicit(), r.Chosen == nil || strings.HasPrefix(r.Chosen.Host, "unix://"); {
	case ex != nil && ex.invalid:
		why := errors.New(ex.Error)
		copts = []client.Opt{
			client.WithHost(opts.settings().defaultHost()), // the scheme; no dial reaches it
			client.WithDialContext(func(context.Context, string, string) (net.Conn, error) {
				return nil, &net.OpError{Op: "dial", Net: "docker", Err: why}
			}),
			client.WithAPIVersionNegotiation(),
		}
	case ex != nil:
		copts = ex.ClientOptions()
	case local && runtime.GOOS != "windows":
		host := ""
		if r.Chosen != nil {
			host = r.Chosen.Host
		}
		c.redial = NewRedialer(host, func(ctx context.Context) *Result { return Detect(ctx, opts) })
		copts = c.redial.ClientOptions()
	case r.Chosen != nil:
		copts = r.Chosen.ClientOptions()
	default:
		copts = []client.Opt{client.WithHost(opts.settings().defaultHost()), client.WithAPIVersionNegotiation()}
	}
	cli, err := client.NewClientWithOpts(copts...)
	if err != nil {
		return nil, fmt.Errorf("build docker client: %w", err)
	}
	c.Client = cli
	return c, nil
}

// Name names the endpoint in messages: the explicit choice and where it was
// made ("DOCKER_HOST=unix:///x.sock (from the environment)"), the socket
// the redialer dials now, or the host.
func (c *Conn) Name() string {
	if ex := c.Result.Explicit(); ex != nil {
		return ex.Choice()
	}
	if c.redial != nil {
		if p := c.redial.Path(); p != "" {
			return "unix://" + p
		}
		return "(no engine found yet)"
	}
	return c.Client.DaemonHost()
}

// Advice says what to do when the endpoint does not answer; "" when
// detection chose it, and the usual advice (start an engine) applies.
func (c *Conn) Advice() string {
	if ex := c.Result.Explicit(); ex != nil {
		return ex.Remedy()
	}
	return ""
}
