package netglue

import (
	"slices"
	"testing"
)

// The helper's proxy allows the public indexes and exactly the host:port
// of each index URL in install_env, nothing wider.
func TestInstallEntries(t *testing.T) {
	es := InstallEntries(map[string]string{
		"PIP_INDEX_URL":       "http://127.0.0.1:8081/simple",
		"PIP_EXTRA_INDEX_URL": "https://user:pw@pkgs.example.com/simple http://[::1]:9000/x",
		"npm_config_registry": "https://npm.example.com:8443/",
		"PIP_TRUSTED_HOST":    "127.0.0.1",
		"OTHER":               "ftp://files.example.com/",
	})
	got := EntryStrings(es)
	want := []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org",
		"127.0.0.1:8081", "pkgs.example.com:443", "[::1]:9000", "npm.example.com:8443"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
}
