package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config that does not load is not checked as the defaults' Docker in
// its place (it may name Kubernetes): doctor says so, and is red.
func TestDoctorInvalidConfigNoDocker(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[backend]\nkind = \"kubernetes\"\n\n[limits]\nmax_sandboxes = \"many\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCP_SANDBOX_CONFIG", cfg)
	t.Setenv("HOME", dir)
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	r := diagnose(t.Context(), &Env{Getenv: func(k string) string { return map[string]string{"HOME": dir}[k] }})
	if r.OK || r.Config.Valid || r.Kubernetes != nil || r.Docker.Chosen != nil || len(r.Docker.Candidates) > 0 || len(r.Images) > 0 {
		t.Errorf("report %+v: want red, with neither Docker nor its images checked", r)
	}
	if !strings.Contains(r.Docker.Reason, "not checked") {
		t.Errorf("docker reason %q: want it to say it was not checked", r.Docker.Reason)
	}
	var out strings.Builder
	printReport(&out, r)
	if strings.Contains(out.String(), "no Docker engine") || strings.HasPrefix(out.String(), "Docker") || !strings.Contains(out.String(), "Engine\n  not checked") {
		t.Errorf("doctor prints\n%s\nwant the engine named as not checked, and no Docker section", out.String())
	}
}
