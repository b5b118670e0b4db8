// Package dockerhost finds the Docker endpoint to use and says plainly why.
//
// AI clients start the MCP server with a bare environment, so DOCKER_HOST is
// often missing even though an engine is running. Detect resolves the
// endpoint from the explicit choice, in this order: docker.host in MCP
// Sandbox's config file (Options.ConfigHost), then, as the docker CLI does,
// DOCKER_HOST with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH, then
// DOCKER_CONTEXT or the current context in the docker config file. It also
// probes the places where Docker Desktop, Colima, Rancher Desktop, OrbStack,
// Podman and rootless Docker put their sockets or pipes. Every candidate is
// pinged concurrently with the real Docker API, so local sockets, Windows
// named pipes, tcp:// with TLS and ssh:// all go through the same client
// code. Liveness is GET /_ping within a short bound; /version and /info only
// name the engine and its version, within a longer bound of their own, and
// an engine slow to answer them (Podman under load) is still used.
//
// The one rule, which the server, the CLI, the doctor and the tray all get
// from here: an explicit choice is used when it answers, and otherwise
// nothing is. Chosen is then nil, Reason and Hint name the choice, where it
// was made and what to do ("DOCKER_HOST=unix:///x.sock (from the
// environment) does not answer: …; start that engine, or unset DOCKER_HOST
// to let MCP Sandbox detect one"), and NewClient fails with
// ErrExplicitUnreachable. The known places are still probed and listed, but
// never chosen in its place: the choice may name another user's or
// machine's engine on purpose. Only when nothing was chosen explicitly is
// the first known place that answers used.
//
// Short-lived callers (the CLI, the tray's each attempt) use NewClient; a
// server that must start whatever is found uses Connect, whose client keeps
// to the same rule when it looks for an engine again.
//
// Typical use:
//
//	cli, res, err := dockerhost.NewClient(ctx, dockerhost.Options{ConfigHost: cfg.Docker.Host})
//	if errors.Is(err, dockerhost.ErrNoEngine) { // ErrExplicitUnreachable matches too
//		fmt.Fprintln(os.Stderr, res.Hint)
//		return err
//	}
//	if err != nil {
//		return err
//	}
//	defer cli.Close()
//	fmt.Printf("using %s (%s): %s\n", res.Chosen.Host, res.Chosen.Engine, res.Reason)
//
// Imports: none
package dockerhost
