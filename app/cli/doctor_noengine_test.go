package cli

import (
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

func TestNothingInstalled(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    dockerhost.Result
		want bool
	}{
		{"every probed socket absent", dockerhost.Result{Candidates: []dockerhost.Candidate{
			{Host: "unix:///var/run/docker.sock", Missing: true},
			{Host: "unix:///home/u/.colima/default/docker.sock", Missing: true},
		}}, true},
		{"a socket that does not answer", dockerhost.Result{Candidates: []dockerhost.Candidate{
			{Host: "unix:///var/run/docker.sock", Error: "connection refused"},
		}}, false},
		{"an explicit choice that does not answer", dockerhost.Result{Candidates: []dockerhost.Candidate{
			{Host: "unix:///tmp/x.sock", Missing: true, Explicit: true},
		}}, false},
		{"an engine answered", dockerhost.Result{Chosen: &dockerhost.Candidate{Host: "unix:///var/run/docker.sock", OK: true}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nothingInstalled(&tc.r); got != tc.want {
				t.Errorf("nothingInstalled = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestInstallAdvice(t *testing.T) {
	for goos, want := range map[string][]string{
		"linux":   {"docker.io", "Docker Desktop", "podman-docker"},
		"darwin":  {"Docker Desktop", "colima"},
		"windows": {"Docker Desktop"},
	} {
		got := installAdvice(goos)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: advice %q does not name %s", goos, got, w)
			}
		}
	}
}
