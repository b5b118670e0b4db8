package sandbox

import (
	"errors"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// appliesSoon follows every message that asks for a change to the config
// file: the server reloads it by itself (config.Watcher), so nobody needs
// to restart anything.
const appliesSoon = "a saved change applies within a second, no restart"

// Error classes. Every error the engine returns wraps one of these, so
// callers (the MCP tools, the CLI) branch with errors.Is and tests check the
// class, not the text. The text says what to do next.
var (
	// ErrDockerUnreachable: the engine did not answer.
	ErrDockerUnreachable = backend.ErrDockerUnreachable
	// ErrNotFound: no such sandbox (in this server's session).
	ErrNotFound = errors.New("sandbox not found")
	// ErrPolicy: the request asks for more than the policy allows.
	ErrPolicy = errors.New("not allowed by policy")
	// ErrExists: copy_out's destination exists and overwrite was not
	// asked for. It comes wrapped together with ErrPolicy.
	ErrExists = hostfs.ErrExists
	// ErrInvalid: the request is malformed (empty command, bad path, …).
	ErrInvalid = errors.New("invalid request")
	// ErrLimit: too many sandboxes.
	ErrLimit = errors.New("sandbox limit reached")
	// ErrPaused: the service is paused from the tray.
	ErrPaused = errors.New("paused")
	// ErrImageNotFound: the image is not present and cannot be pulled.
	ErrImageNotFound = backend.ErrImageNotFound
	// ErrPull: pulling the image failed.
	ErrPull = backend.ErrPull
	// ErrClosed: the engine is shutting down.
	ErrClosed = errors.New("engine closed")
	// ErrWorkspace: a new sandbox's workspace is not the size-capped tmpfs
	// volume it was created as (the engine ignored the volume's options or
	// reused a volume of that name), so the sandbox was not started.
	ErrWorkspace = backend.ErrWorkspace
)
