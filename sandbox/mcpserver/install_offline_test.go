package mcpserver_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestInstallOffline: an install whose helper cannot reach its package
// index (here one whose host does not resolve) is an error that speaks of
// the network and of what to do, not of the package's name, with no
// success wording and the time it really took; with pip and with npm.
func TestInstallOffline(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage, testenv.NodeImage)
	// pip says why only while it retries: PIP_RETRIES is left alone.
	p := startServer(t, serverEnv(t, `[network]
install_env = { PIP_INDEX_URL = "https://no-such-index.invalid/simple", npm_config_registry = "https://no-such-registry.invalid/", npm_config_fetch_retries = "0" }
`))
	sess := sdkClient(t, p, nil)
	for _, tc := range []struct{ language, pkg string }{{"python", "six"}, {"javascript", "lodash"}} {
		t.Run(tc.language, func(t *testing.T) {
			id := createWith(t, sess, map[string]any{"language": tc.language})
			res := call(t, sess, "install_packages", map[string]any{"sandbox_id": id, "packages": []string{tc.pkg}})
			got := text(res)
			t.Log(got)
			if !res.IsError {
				t.Errorf("an install that installed nothing is not an error: %s", got)
			}
			for _, want := range []string{"could not be reached", "network.install_env", "copy_in", "config.toml"} {
				if !strings.Contains(got, want) {
					t.Errorf("result lacks %q: %s", want, got)
				}
			}
			for _, bad := range []string{"Installed by", "has no such package", "check the name"} {
				if strings.Contains(got, bad) {
					t.Errorf("result says %q: %s", bad, got)
				}
			}
			if regexp.MustCompile(`\(0 ms\)`).MatchString(got) {
				t.Errorf("result claims it took no time: %s", got)
			}
		})
	}
}
