package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// The helper's proxy allows the public indexes and exactly the host:port
// of each index URL in install_env, nothing wider.
func TestInstallEntries(t *testing.T) {
	es := installEntries(map[string]string{
		"PIP_INDEX_URL":       "http://127.0.0.1:8081/simple",
		"PIP_EXTRA_INDEX_URL": "https://user:pw@pkgs.example.com/simple http://[::1]:9000/x",
		"npm_config_registry": "https://npm.example.com:8443/",
		"PIP_TRUSTED_HOST":    "127.0.0.1",
		"OTHER":               "ftp://files.example.com/",
	})
	got := entryStrings(es)
	want := []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org",
		"127.0.0.1:8081", "pkgs.example.com:443", "[::1]:9000", "npm.example.com:8443"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
}

func TestInstallFailureNoteProxy(t *testing.T) {
	pip := "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='evil.example', port=443): Max retries exceeded (Caused by ProxyError('Unable to connect to proxy', OSError('Tunnel connection failed: 403 Forbidden')))"
	if n := installFailureNote("pip", pip, "config.toml"); !strings.Contains(n, "reaches only pypi.org") || !strings.Contains(n, "network.install_env") {
		t.Errorf("note for a refused host: %q", n)
	}
}
