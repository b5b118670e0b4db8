package dockerhost

import "testing"

func TestPinnedHost(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *Candidate
		want string
	}{
		{"none answered", nil, ""},
		{"default socket", &Candidate{Host: "unix:///var/run/docker.sock", Source: "default socket"}, ""},
		{"default pipe", &Candidate{Host: "npipe:////./pipe/docker_engine", Source: "default pipe"}, ""},
		{"colima", &Candidate{Host: "unix:///home/u/.colima/default/docker.sock", Source: "Colima (profile default)"}, "unix:///home/u/.colima/default/docker.sock"},
		{"desktop pipe", &Candidate{Host: "npipe:////./pipe/dockerDesktopLinuxEngine", Source: "Docker Desktop"}, "npipe:////./pipe/dockerDesktopLinuxEngine"},
		{"remote tls", &Candidate{Host: "tcp://10.0.0.2:2376", Source: "DOCKER_HOST"}, ""},
		{"config's docker.host", &Candidate{Host: "unix:///home/u/.colima/default/docker.sock", Source: "docker.host"}, ""},
		{"ssh", &Candidate{Host: "ssh://me@box", Source: "context box"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Chosen: tc.c}
			if got := r.PinnedHost(); got != tc.want {
				t.Errorf("PinnedHost = %q, want %q", got, tc.want)
			}
		})
	}
}
