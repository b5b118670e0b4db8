package testenv

import (
	"os"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// TestWithRuntime: the runtime lands in the file's [docker] table, whether
// the test wrote one or not, and the result is a valid config.
func TestWithRuntime(t *testing.T) {
	for _, tc := range []struct {
		name, runtime, toml, want string
	}{
		{"engine default leaves the text", "", "[pool]\nsize = 0\n", ""},
		{"no docker table", "runsc", "[pool]\nsize = 0\n", "runsc"},
		{"no final newline", "runsc", "[pool]\nsize = 0", "runsc"},
		{"docker table kept", "runsc", "[docker]\nhost = \"unix:///x.sock\"\n[pool]\nsize = 0\n", "runsc"},
		{"docker table last", "runsc", "[pool]\nsize = 0\n[docker]", "runsc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MCP_SANDBOX_TEST_RUNTIME", tc.runtime)
			got := WithRuntime(tc.toml)
			if tc.runtime == "" && got != tc.toml {
				t.Errorf("changed to %q", got)
			}
			c, err := config.Parse("test.toml", []byte(got))
			if err != nil {
				t.Fatalf("%q: %v", got, err)
			}
			if c.Docker.Runtime != tc.want || c.Pool.Size != 0 {
				t.Errorf("%q: runtime %q pool %d", got, c.Docker.Runtime, c.Pool.Size)
			}
		})
	}
}

// TestWindowTagsShipped: the window the tests build is the one that ships,
// built with the same tags by every packaging script.
func TestWindowTagsShipped(t *testing.T) {
	lib, err := os.ReadFile("../../packaging/lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lib), "\nWINDOW_GOFLAGS=-tags="+WindowTags+"\n") {
		t.Errorf("packaging/lib.sh does not set WINDOW_GOFLAGS=-tags=%s", WindowTags)
	}
	for _, target := range []string{"linux", "darwin", "windows"} {
		b, err := os.ReadFile("../../packaging/" + target + "/package.sh")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `GOFLAGS="$WINDOW_GOFLAGS"`) {
			t.Errorf("packaging/%s/package.sh builds the window without GOFLAGS=\"$WINDOW_GOFLAGS\"", target)
		}
	}
}
