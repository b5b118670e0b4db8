package dockerhost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
)

// probeAll pings every candidate that has no error yet, all at once, and
// records what each answered. It returns when every ping has finished or
// timed out.
func (s settings) probeAll(ctx context.Context, cands []Candidate) {
	var wg sync.WaitGroup
	for i := range cands {
		if cands[i].Error != "" {
			continue
		}
		wg.Add(1)
		go func(c *Candidate) {
			defer wg.Done()
			s.probe(ctx, c)
		}(&cands[i])
	}
	wg.Wait()
}

// probe confirms one endpoint with the real API. Liveness is /_ping alone,
// bounded by the ping timeout; /version and /info, which only name the
// engine, get their own, longer bound (identify), so an engine that is
// slow to describe itself is still found.
func (s settings) probe(ctx context.Context, c *Candidate) {
	missing, target, err := checkLocal(c.Host)
	c.Missing, c.Target = missing, target
	if err != nil {
		c.Error = err.Error()
		return
	}
	timeout := s.timeout
	if isRemote(c.Host) {
		timeout = s.remoteTimeout
	}
	cli, err := client.NewClientWithOpts(c.ClientOptions()...)
	if err != nil {
		c.Error = fmt.Sprintf("cannot build a client: %v", err)
		return
	}
	defer cli.Close()

	if !c.ping(ctx, cli, timeout) {
		return
	}
	s.identify(ctx, cli, c)
}

// ping asks /_ping within timeout and records the answer.
func (c *Candidate) ping(parent context.Context, cli *client.Client, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	ping, err := cli.Ping(ctx)
	if err != nil {
		c.describe(parent, ctx, err, timeout)
		return false
	}
	c.OK = true
	c.APIVersion = ping.APIVersion
	return true
}

// identify fills in what the engine says of itself. When /version does not
// answer within the info timeout, the engine and version are "unknown" (or
// the engine the place implies); the endpoint stays OK.
func (s settings) identify(ctx context.Context, cli *client.Client, c *Candidate) {
	ctx, cancel := context.WithTimeout(ctx, max(s.infoTimeout, s.timeout))
	defer cancel()
	hint := c.hint
	if hint == "" && c.Target != "" {
		hint = hintForPath(c.Target)
	}
	start := time.Now()
	v, err := cli.ServerVersion(ctx)
	if err != nil {
		c.Version, c.Engine = "unknown", cmp.Or(hint, "unknown")
		if ctx.Err() != nil {
			c.Unidentified = fmt.Sprintf("/version did not answer within %s", time.Since(start).Round(100*time.Millisecond))
		} else {
			c.Unidentified = "/version failed: " + oneLine(err)
		}
		return
	}
	info, err := cli.Info(ctx)
	if err != nil {
		info = system.Info{}
	}
	c.Version = v.Version
	if v.APIVersion != "" {
		c.APIVersion = v.APIVersion
	}
	if v.Os != "" {
		c.OS = v.Os + "/" + v.Arch
	}
	c.Engine = engineName(v, info, hint)
}

// describe records why the ping failed, in words a person can act on:
// whether detection itself was cut short (parent), or this endpoint ran out
// of its own time (ctx).
func (c *Candidate) describe(parent, ctx context.Context, err error, timeout time.Duration) {
	switch {
	case parent.Err() != nil:
		c.Error = "detection was cut short: " + parent.Err().Error()
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		c.Error = fmt.Sprintf("did not answer within %s", timeout)
	case errors.Is(err, fs.ErrPermission):
		c.Error = "permission denied: " + oneLine(err)
	case errors.Is(err, fs.ErrNotExist) && strings.HasPrefix(c.Host, "npipe://"):
		c.Missing = true
		c.Error = "no pipe at " + strings.TrimPrefix(c.Host, "npipe://")
	default:
		c.Error = "did not answer: " + oneLine(err)
	}
}

// oneLine flattens a client error, some of which span lines.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// hintForPath names the engine a socket path belongs to, for a default
// socket that links into one of the known places.
func hintForPath(p string) string {
	switch {
	case strings.Contains(p, "/.colima/") || strings.Contains(p, "/colima/"):
		return EngineColima
	case strings.Contains(p, "/.orbstack/"):
		return EngineOrbStack
	case strings.Contains(p, "/.rd/"):
		return EngineRancherDesktop
	case strings.Contains(p, "/.docker/run/") || strings.Contains(p, "/.docker/desktop/"):
		return EngineDockerDesktop
	case strings.Contains(p, "podman"):
		return EnginePodman
	}
	return ""
}
