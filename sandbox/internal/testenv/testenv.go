// Package testenv forwards to sandbox/testenv, where the test helpers now
// live (app/ tests need them too, and cannot import an internal package).
//
// Deprecated: import github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv.
package testenv

import (
	"log/slog"
	"testing"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

var (
	PythonImage = testenv.PythonImage
	PlotImage   = testenv.PlotImage
	NodeImage   = testenv.NodeImage
	TinyImage   = testenv.TinyImage
)

func Missing(t testing.TB, what string) { t.Helper(); testenv.Missing(t, what) }
func Docker(t testing.TB, images ...string) *client.Client {
	t.Helper()
	return testenv.Docker(t, images...)
}
func Config(t testing.TB) *config.Config { t.Helper(); return testenv.Config(t) }
func Logger(t testing.TB) *slog.Logger   { return testenv.Logger(t) }
func Inspector(t testing.TB) string      { t.Helper(); return testenv.Inspector(t) }
