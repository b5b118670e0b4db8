package docker

import (
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/backendtest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestConformance runs the backend conformance suite on the engine the
// environment names (DOCKER_HOST: Docker, or Podman in CI's Podman step),
// under the runtime MCP_SANDBOX_TEST_RUNTIME asks for.
func TestConformance(t *testing.T) {
	cli := testenv.Docker(t, testenv.TinyImage)
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		return New(cli, testenv.Logger(t))
	}, backendtest.Options{Image: testenv.TinyImage, Runtime: testenv.Runtime()})
}
