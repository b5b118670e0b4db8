package clientconfig

import (
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// The sandbox's copy tools must never read or write an AI client's config
// (it holds other servers' secrets and decides what they run), and
// sandbox/ cannot import this package: config.ClientConfigPaths is the
// list they use, and this test keeps it true for every client on every
// system, with the default environment.
func TestClientConfigsAreDenied(t *testing.T) {
	for _, tc := range []struct {
		goos, home, sep string
		env             mapEnv
	}{
		{"linux", "/home/me", "/", mapEnv{"HOME": "/home/me"}},
		{"darwin", "/Users/me", "/", mapEnv{"HOME": "/Users/me"}},
		{"windows", `C:\Users\me`, `\`, mapEnv{"USERPROFILE": `C:\Users\me`, "APPDATA": `C:\Users\me\AppData\Roaming`, "LOCALAPPDATA": `C:\Users\me\AppData\Local`}},
	} {
		var denied []string
		for _, d := range config.ClientConfigPaths() {
			denied = append(denied, tc.home+strings.ReplaceAll(strings.TrimPrefix(d, "~"), "/", tc.sep))
		}
		env := Env{GOOS: tc.goos, Getenv: tc.env.get}
		for _, c := range Clients() {
			p, err := c.ConfigPath(env)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.goos, c.Name(), err)
			}
			covered := false
			for _, d := range denied {
				covered = covered || p == d || strings.HasPrefix(p, d+tc.sep)
			}
			if !covered {
				t.Errorf("%s: %s's config %s is not in config.ClientConfigPaths", tc.goos, c.Name(), p)
			}
		}
	}
}
