// Package dockerhost finds the Docker endpoint to use and says plainly why.
//
// AI clients start the MCP server with a bare environment, so DOCKER_HOST is
// often missing even though an engine is running. Detect resolves the
// endpoint the way the docker CLI does (DOCKER_HOST with DOCKER_TLS_VERIFY
// and DOCKER_CERT_PATH, then DOCKER_CONTEXT or the current context in the
// docker config file), and then probes the places where Docker Desktop,
// Colima, Rancher Desktop, OrbStack, Podman and rootless Docker put their
// sockets or pipes. Every candidate is confirmed with a real ping of the
// Docker API (GET /_ping, then /version and /info), concurrently and with a
// bounded timeout, so local sockets, Windows named pipes, tcp:// with TLS and
// ssh:// all go through the same client code.
//
// An explicit choice (DOCKER_HOST or a context) wins whenever it answers.
// When it does not, it is still reported, with its error, and the first
// known place that answers is chosen instead; the Result's Reason and Hint
// say so.
//
// Typical use:
//
//	cli, res, err := dockerhost.NewClient(ctx, dockerhost.Options{})
//	if errors.Is(err, dockerhost.ErrNoEngine) {
//		fmt.Fprintln(os.Stderr, res.Hint)
//		return err
//	}
//	if err != nil {
//		return err
//	}
//	defer cli.Close()
//	fmt.Printf("using %s (%s): %s\n", res.Chosen.Host, res.Chosen.Engine, res.Reason)
package dockerhost
