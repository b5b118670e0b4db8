// Package docker implements the sandbox engine's Backend on a Docker Engine
// (local, remote over TLS or ssh, or Podman's Docker-compatible API) through
// the official Go client, with API version negotiation so engines from 20.10
// on work.
//
// Every container it makes (sandboxes and install helpers alike) is
// hardened as backend.HardeningFor describes, rendered into the create
// request by hardening.go; its tests read the request, and a real
// container's inspect, back into that description.
//
//	cli, _ := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
//	be := docker.New(cli, slog.Default())
//	id, err := be.Create(ctx, spec)
//
// Imports: sandbox/backend
package docker
