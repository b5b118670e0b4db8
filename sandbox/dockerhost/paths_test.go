package dockerhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKnownPlaces(t *testing.T) {
	type place struct{ Host, Source string }
	tests := []struct {
		name  string
		opts  Options
		env   map[string]string
		setup func(t *testing.T, home string) // makes directories in $HOME
		want  []place
	}{
		{
			name: "windows",
			opts: Options{GOOS: "windows", Home: `C:\Users\ada`},
			env:  map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, // ignored on Windows
			want: []place{
				{"npipe:////./pipe/docker_engine", "default pipe"},
				{"npipe:////./pipe/dockerDesktopLinuxEngine", "Docker Desktop"},
				{"npipe:////./pipe/podman-machine-default", "Podman (machine podman-machine-default)"},
			},
		},
		{
			name: "darwin",
			opts: Options{GOOS: "darwin", Home: "/Users/ada", UID: "501"},
			env:  map[string]string{"TMPDIR": "/var/folders/xy/abc123/T/"},
			want: []place{
				{"unix:///var/run/docker.sock", "default socket"},
				{"unix:///Users/ada/.docker/run/docker.sock", "Docker Desktop"},
				{"unix:///Users/ada/.orbstack/run/docker.sock", "OrbStack"},
				{"unix:///Users/ada/.colima/default/docker.sock", "Colima (profile default)"},
				{"unix:///Users/ada/.rd/docker.sock", "Rancher Desktop"},
				{"unix:///var/folders/xy/abc123/T/podman/podman-machine-default-api.sock", "Podman (machine podman-machine-default)"},
			},
		},
		{
			name: "darwin with COLIMA_HOME",
			opts: Options{GOOS: "darwin", Home: "/Users/ada"},
			env:  map[string]string{"COLIMA_HOME": "/opt/colima", "TMPDIR": "/tmp"},
			want: []place{
				{"unix:///var/run/docker.sock", "default socket"},
				{"unix:///Users/ada/.docker/run/docker.sock", "Docker Desktop"},
				{"unix:///Users/ada/.orbstack/run/docker.sock", "OrbStack"},
				{"unix:///opt/colima/default/docker.sock", "Colima (profile default)"},
				{"unix:///Users/ada/.rd/docker.sock", "Rancher Desktop"},
				{"unix:///tmp/podman/podman-machine-default-api.sock", "Podman (machine podman-machine-default)"},
			},
		},
		{
			name: "linux",
			opts: Options{GOOS: "linux", Home: "/home/ada", UID: "1000"},
			env:  map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"},
			want: []place{
				{"unix:///var/run/docker.sock", "default socket"},
				{"unix:///home/ada/.docker/desktop/docker.sock", "Docker Desktop"},
				{"unix:///home/ada/.orbstack/run/docker.sock", "OrbStack"},
				{"unix:///home/ada/.colima/default/docker.sock", "Colima (profile default)"},
				{"unix:///home/ada/.rd/docker.sock", "Rancher Desktop"},
				{"unix:///run/user/1000/docker.sock", "rootless Docker"},
				{"unix:///run/podman/podman.sock", "Podman (rootful)"},
				{"unix:///run/user/1000/podman/podman.sock", "Podman (rootless)"},
			},
		},
		{
			name: "linux without XDG_RUNTIME_DIR",
			opts: Options{GOOS: "linux", Home: "/home/ada", UID: "1000"},
			want: []place{
				{"unix:///var/run/docker.sock", "default socket"},
				{"unix:///home/ada/.docker/desktop/docker.sock", "Docker Desktop"},
				{"unix:///home/ada/.orbstack/run/docker.sock", "OrbStack"},
				{"unix:///home/ada/.colima/default/docker.sock", "Colima (profile default)"},
				{"unix:///home/ada/.rd/docker.sock", "Rancher Desktop"},
				{"unix:///run/user/1000/docker.sock", "rootless Docker"},
				{"unix:///run/podman/podman.sock", "Podman (rootful)"},
				{"unix:///run/user/1000/podman/podman.sock", "Podman (rootless)"},
			},
		},
		{
			name: "linux with another runtime dir and a root",
			opts: Options{GOOS: "linux", Home: "/home/ada", UID: "1000", Root: "/sysroot"},
			env:  map[string]string{"XDG_RUNTIME_DIR": "/tmp/rt"},
			want: []place{
				{"unix:///sysroot/var/run/docker.sock", "default socket"},
				{"unix:///home/ada/.docker/desktop/docker.sock", "Docker Desktop"},
				{"unix:///home/ada/.orbstack/run/docker.sock", "OrbStack"},
				{"unix:///home/ada/.colima/default/docker.sock", "Colima (profile default)"},
				{"unix:///home/ada/.rd/docker.sock", "Rancher Desktop"},
				{"unix:///tmp/rt/docker.sock", "rootless Docker"},
				{"unix:///sysroot/run/user/1000/docker.sock", "rootless Docker"},
				{"unix:///sysroot/run/podman/podman.sock", "Podman (rootful)"},
				{"unix:///tmp/rt/podman/podman.sock", "Podman (rootless)"},
				{"unix:///sysroot/run/user/1000/podman/podman.sock", "Podman (rootless)"},
			},
		},
		{
			name: "colima profiles in every directory, podman machines",
			opts: Options{GOOS: "darwin"},
			env:  map[string]string{"XDG_CONFIG_HOME": "$HOME/xdg", "TMPDIR": "$HOME/tmp"},
			setup: func(t *testing.T, home string) {
				for _, d := range []string{
					".colima/work", ".colima/default", ".colima/_lima", ".colima/_templates",
					"xdg/colima/default", ".config/colima/arm",
					".local/share/containers/podman/machine/qemu",
					".local/share/containers/podman/machine/applehv",
					"tmp/podman",
				} {
					if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				for _, f := range []string{
					".colima/ssh_config",
					".local/share/containers/podman/machine/qemu/podman.sock",
					".local/share/containers/podman/machine/applehv/podman-machine-default-api.sock",
					"tmp/podman/dev-api.sock",
				} {
					writeFile(t, filepath.Join(home, f), nil)
				}
			},
			want: []place{
				{"unix:///var/run/docker.sock", "default socket"},
				{"unix://$HOME/.docker/run/docker.sock", "Docker Desktop"},
				{"unix://$HOME/.orbstack/run/docker.sock", "OrbStack"},
				{"unix://$HOME/.colima/default/docker.sock", "Colima (profile default)"},
				{"unix://$HOME/.colima/work/docker.sock", "Colima (profile work)"},
				{"unix://$HOME/xdg/colima/default/docker.sock", "Colima (profile default)"},
				{"unix://$HOME/.config/colima/arm/docker.sock", "Colima (profile arm)"},
				{"unix://$HOME/.rd/docker.sock", "Rancher Desktop"},
				{"unix://$HOME/tmp/podman/podman-machine-default-api.sock", "Podman (machine podman-machine-default)"},
				{"unix://$HOME/.local/share/containers/podman/machine/applehv/podman-machine-default-api.sock", "Podman (machine podman-machine-default)"},
				{"unix://$HOME/tmp/podman/dev-api.sock", "Podman (machine dev)"},
				{"unix://$HOME/.local/share/containers/podman/machine/qemu/podman.sock", "Podman (machine qemu)"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			home := "$HOME" // no substitution unless the home is temporary
			if opts.Home == "" {
				opts.Home = t.TempDir()
				home = opts.Home
			}
			if tt.setup != nil {
				tt.setup(t, opts.Home)
			}
			opts.Getenv = func(k string) string { return strings.ReplaceAll(tt.env[k], "$HOME", opts.Home) }
			var got []place
			for _, c := range opts.settings().knownPlaces() {
				got = append(got, place{strings.ReplaceAll(c.Host, home, "$HOME"), c.Source})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("known places (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeHost(t *testing.T) {
	s := Options{GOOS: "linux", Home: "/home/ada"}.settings()
	tests := []struct {
		host    string
		tls     bool
		want    string
		wantErr bool
	}{
		{host: "unix:///var/run/docker.sock", want: "unix:///var/run/docker.sock"},
		{host: "unix://", want: "unix:///var/run/docker.sock"},
		{host: "npipe://", want: "npipe:////./pipe/docker_engine"},
		{host: "npipe:////./pipe/podman-machine-default", want: "npipe:////./pipe/podman-machine-default"},
		{host: "tcp://10.0.0.5:2375", want: "tcp://10.0.0.5:2375"},
		{host: "tcp://10.0.0.5", want: "tcp://10.0.0.5:2375"},
		{host: "tcp://10.0.0.5", tls: true, want: "tcp://10.0.0.5:2376"},
		{host: "tcp://:2375", want: "tcp://localhost:2375"},
		{host: "tcp://[::1]:2376/prefix/", want: "tcp://[::1]:2376/prefix"},
		{host: " build-box:2376 ", want: "tcp://build-box:2376"},
		{host: "ssh://me@build-box", want: "ssh://me@build-box"},
		{host: "ssh://me:secret@build-box", wantErr: true},
		{host: "fd://", wantErr: true},
		{host: "http://build-box", wantErr: true},
		{host: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := normalizeHost(tt.host, tt.tls, s)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("normalizeHost(%q, tls=%v) = %q, %v; want %q (error: %v)", tt.host, tt.tls, got, err, tt.want, tt.wantErr)
		}
	}
}
