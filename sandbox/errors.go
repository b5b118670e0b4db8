package sandbox

import (
	"errors"
)

// appliesSoon follows every message that asks for a change to the config
// file: the server reloads it by itself (config.Watcher), so nobody needs
// to restart anything.
const appliesSoon = "a saved change applies within a second, no restart"

// Error classes. Every error the engine returns wraps one of these, so
// callers (the MCP tools, the CLI) branch with errors.Is and tests check the
// class, not the text. The text says what to do next. The backend's classes
// (backend.ErrDockerUnreachable, ErrImageNotFound, ErrPull, ErrWorkspace) and
// the host fence's (hostfs.ErrExists: copy_out's destination exists, wrapped
// with ErrPolicy) reach callers as they are.
var (
	// ErrNotFound: no such sandbox (in this server's session).
	ErrNotFound = errors.New("sandbox not found")
	// ErrPolicy: the request asks for more than the policy allows.
	ErrPolicy = errors.New("not allowed by policy")
	// ErrInvalid: the request is malformed (empty command, bad path, …).
	ErrInvalid = errors.New("invalid request")
	// ErrLimit: too many sandboxes.
	ErrLimit = errors.New("sandbox limit reached")
	// ErrPaused: the service is paused from the tray.
	ErrPaused = errors.New("paused")
	// ErrClosed: the engine is shutting down.
	ErrClosed = errors.New("engine closed")
)
