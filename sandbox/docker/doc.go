// Package docker implements the sandbox engine's Backend on a Docker Engine
// (local, remote over TLS or ssh, or Podman's Docker-compatible API) through
// the official Go client, with API version negotiation so engines from 20.10
// on work.
//
// Every container it makes is hardened by the options in hardening.go; each
// is a small function over the container's configuration, applied in order
// and tested on its own.
//
//	cli, _ := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
//	be := docker.New(cli, slog.Default())
//	id, err := be.Create(ctx, spec)
//
// Imports: sandbox/backend
package docker
