package dockerhost

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"
)

// TestHint covers the hints for failures the fakes cannot produce here (a
// socket the user may not open, as root may open any) and the wording for
// each operating system.
func TestHint(t *testing.T) {
	tests := []struct {
		name  string
		goos  string
		cands []Candidate
		want  []string
	}{
		{
			name: "permission denied",
			goos: "linux",
			cands: []Candidate{
				{Host: "unix:///var/run/docker.sock", Source: "default socket", Error: "permission denied: dial unix /var/run/docker.sock: connect: permission denied"},
			},
			want: []string{"You may not use /var/run/docker.sock: add your user to the docker group", "Tried: /var/run/docker.sock."},
		},
		{
			name:  "darwin",
			goos:  "darwin",
			cands: []Candidate{{Host: "unix:///Users/ada/.docker/run/docker.sock", Source: "Docker Desktop", hint: EngineDockerDesktop, Missing: true, Error: "no socket at /Users/ada/.docker/run/docker.sock"}},
			want:  []string{"Start Docker Desktop, OrbStack or Rancher Desktop, or run `colima start` or `podman machine start`", "Tried: /Users/ada/.docker/run/docker.sock."},
		},
		{
			name: "windows",
			goos: "windows",
			cands: []Candidate{
				{Host: "npipe:////./pipe/docker_engine", Source: "default pipe", Missing: true, Error: "no pipe at //./pipe/docker_engine"},
				{Host: "npipe:////./pipe/podman-machine-default", Source: "Podman (machine podman-machine-default)", hint: EnginePodman, Error: "did not answer within 2s"},
			},
			want: []string{"An engine seems installed but not running: run `podman machine start`.", "Tried: npipe:////./pipe/docker_engine, npipe:////./pipe/podman-machine-default."},
		},
		{
			name: "explicit context and nothing",
			goos: "windows",
			cands: []Candidate{
				{Host: "ssh://me@build-box", Source: "context build-box", Explicit: true, Error: "did not answer: ssh exited"},
				{Host: "npipe:////./pipe/docker_engine", Source: "default pipe", Missing: true, Error: "no pipe at //./pipe/docker_engine"},
			},
			// Only the explicit choice matters: nothing stands in for it.
			want: []string{"ssh://me@build-box does not answer: ssh exited; start that engine."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{Candidates: tt.cands}
			r.choose(Options{GOOS: tt.goos, Home: "/nonexistent"}.settings())
			for _, w := range tt.want {
				if !strings.Contains(r.Hint, w) {
					t.Errorf("hint %q lacks %q", r.Hint, w)
				}
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	live := context.Background()
	expired, cancel := context.WithTimeout(live, -time.Second)
	defer cancel()
	tests := []struct {
		name        string
		host        string
		parent, ctx context.Context
		err         error
		want        string
		wantMissing bool
	}{
		{"timeout", "unix:///x.sock", live, expired, context.DeadlineExceeded, "did not answer within 2s", false},
		{"detection cut short", "unix:///x.sock", expired, expired, context.DeadlineExceeded, "detection was cut short: context deadline exceeded", false},
		{"permission", "unix:///x.sock", live, live, fmt.Errorf("permission denied while trying to connect: %w", fs.ErrPermission), "permission denied: permission denied while trying to connect: permission denied", false},
		{"pipe not found", "npipe:////./pipe/docker_engine", live, live, fmt.Errorf("open //./pipe/docker_engine: %w", fs.ErrNotExist), "no pipe at //./pipe/docker_engine", true},
		{"other", "tcp://10.0.0.5:2375", live, live, errors.New("error during connect:\n  connection reset"), "did not answer: error during connect: connection reset", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Candidate{Host: tt.host}
			c.describe(tt.parent, tt.ctx, tt.err, 2*time.Second)
			if c.Error != tt.want || c.Missing != tt.wantMissing {
				t.Errorf("error %q missing %v, want %q %v", c.Error, c.Missing, tt.want, tt.wantMissing)
			}
		})
	}
}
