package agentconn

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// LaunchTimeout bounds an agent's launch: the engine's architecture
// (asked once; Podman takes seconds to answer under load), the look-up of
// the image's tools, the copy and the agent's ready.
const LaunchTimeout = 45 * time.Second

// LaunchRequest says which container an agent starts in; Launch finds the
// architecture and the image's tools itself.
type LaunchRequest struct {
	ContainerID string
	User        string // the sandbox user, who runs the agent
	// Tool returns the absolute path of the image's name tool, "" (and
	// no error) when the image has none.
	Tool   func(ctx context.Context, name string) (string, error)
	Env    []string // the copy's environment (the agent's is the image's)
	Dir    string   // a writable, executable directory: the workspace
	Budget *Budget  // the server's streams, shared by its agents (nil: none)
	Staged string   // the agent's file, staged before any code ran ("": copy it in)
}

// Launch starts an agent in req.ContainerID through be, within
// LaunchTimeout, with the image's cat and chmod to copy it in. An error
// wrapping ErrUnusable means it cannot run there (be cannot attach, no
// agent for the engine's architecture, no cat or chmod).
func Launch(ctx context.Context, be backend.Backend, req LaunchRequest) (*Conn, error) {
	at, ok := be.(backend.Attacher)
	if !ok {
		return nil, fmt.Errorf("%w: the backend cannot attach", ErrUnusable)
	}
	ctx, cancel := context.WithTimeout(ctx, LaunchTimeout)
	defer cancel()
	arch := EngineArch(ctx, be)
	if !agent.Has(arch) {
		return nil, fmt.Errorf("%w: no agent for architecture %q", ErrUnusable, arch)
	}
	var tools [2]string
	if req.Staged == "" {
		var err error
		if tools, err = findTools(ctx, req.Tool, [2]string{"cat", "chmod"}); err != nil {
			return nil, err
		}
	}
	return Start(ctx, attachHost{be, at}, StartRequest{
		ContainerID: req.ContainerID, User: req.User, Arch: arch,
		Cat: tools[0], Chmod: tools[1], Env: req.Env, Dir: req.Dir, Budget: req.Budget, Staged: req.Staged,
	})
}

// Stage copies the agent into req.Dir of req.ContainerID (as req.User,
// mode 700) and returns its file, for a later Launch with Staged to run:
// only in a container no code has run in, nor will before that Launch.
func Stage(ctx context.Context, be backend.Backend, req LaunchRequest) (string, error) {
	at, ok := be.(backend.Attacher)
	if !ok {
		return "", fmt.Errorf("%w: the backend cannot attach", ErrUnusable)
	}
	ctx, cancel := context.WithTimeout(ctx, LaunchTimeout)
	defer cancel()
	arch := EngineArch(ctx, be)
	if !agent.Has(arch) {
		return "", fmt.Errorf("%w: no agent for architecture %q", ErrUnusable, arch)
	}
	tools, err := findTools(ctx, req.Tool, [2]string{"cat", "chmod"})
	if err != nil {
		return "", err
	}
	file := req.Dir + "/" + agent.FilePrefix + runner.NewNonce()[:12]
	err = copyAgent(ctx, attachHost{be, at}, StartRequest{
		ContainerID: req.ContainerID, User: req.User, Arch: arch, Cat: tools[0], Chmod: tools[1], Env: req.Env,
	}, file)
	if err != nil {
		return "", err
	}
	return file, nil
}

// findTools looks the two tools up at once (each look-up is an exec or
// more: a round trip through a cluster's API server on Kubernetes), and
// returns their paths, or the first name's error in their order.
func findTools(ctx context.Context, tool func(context.Context, string) (string, error), names [2]string) ([2]string, error) {
	var paths [2]string
	var errs [2]error
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { paths[i], errs[i] = tool(ctx, name) })
	}
	wg.Wait()
	for i, name := range names {
		if errs[i] != nil {
			return paths, errs[i]
		}
		if paths[i] == "" {
			return paths, fmt.Errorf("%w: the image has no %s to copy the agent in with", ErrUnusable, name)
		}
	}
	return paths, nil
}

// attachHost is a backend with its Attacher, as Start needs it.
type attachHost struct {
	backend.Backend
	at backend.Attacher
}

func (h attachHost) Attach(ctx context.Context, id string, spec backend.ExecSpec) (backend.Process, error) {
	return h.at.Attach(ctx, id, spec)
}

// EngineArch is be's engine's architecture, or this machine's when be
// cannot say.
func EngineArch(ctx context.Context, be backend.Backend) string {
	if ar, ok := be.(backend.ArchReporter); ok {
		if a, err := ar.EngineArch(ctx); err == nil && a != "" {
			return a
		}
	}
	return runtime.GOARCH
}
