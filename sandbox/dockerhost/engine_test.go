package dockerhost

import (
	"testing"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/system"
)

func TestEngineName(t *testing.T) {
	version := func(platform string, components ...string) types.Version {
		var v types.Version
		v.Platform.Name = platform
		for _, c := range components {
			v.Components = append(v.Components, types.ComponentVersion{Name: c})
		}
		return v
	}
	tests := []struct {
		name string
		v    types.Version
		info system.Info
		hint string
		want string
	}{
		{"docker desktop", version("Docker Desktop 4.44.0 (201307)", "Engine"), system.Info{OperatingSystem: "Docker Desktop", Name: "docker-desktop"}, "", EngineDockerDesktop},
		{"orbstack", version("", "Engine"), system.Info{OperatingSystem: "OrbStack", Name: "orbstack"}, "", EngineOrbStack},
		{"colima default", version("", "Engine"), system.Info{OperatingSystem: "Ubuntu 24.04.2 LTS", Name: "colima"}, "", EngineColima},
		{"colima profile", version("", "Engine"), system.Info{OperatingSystem: "Ubuntu 24.04.2 LTS", Name: "colima-work"}, "", EngineColima},
		{"rancher desktop lima", version("", "Engine"), system.Info{OperatingSystem: "Alpine Linux v3.20", Name: "lima-rancher-desktop"}, "", EngineRancherDesktop},
		{"rancher desktop wsl", version("", "Engine"), system.Info{OperatingSystem: "Rancher Desktop WSL Distribution", Name: "laptop"}, "", EngineRancherDesktop},
		{"podman component", version("linux/amd64/fedora-42", "Podman Engine", "Conmon"), system.Info{OperatingSystem: "fedora"}, "", EnginePodman},
		{"podman platform", version("Podman Engine"), system.Info{}, "", EnginePodman},
		{"plain docker", version("Docker Engine - Community", "Engine", "containerd"), system.Info{OperatingSystem: "Debian GNU/Linux 12 (bookworm)"}, "", EngineDocker},
		{"hint from the place", version("", "Engine"), system.Info{OperatingSystem: "Ubuntu 24.04.2 LTS", Name: "my-vm"}, EngineColima, EngineColima},
		{"self-description beats the place", version("", "Engine"), system.Info{OperatingSystem: "Docker Desktop"}, EngineColima, EngineDockerDesktop},
		{"nothing known", types.Version{}, system.Info{}, "", EngineDocker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := engineName(tt.v, tt.info, tt.hint); got != tt.want {
				t.Errorf("engineName = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHintForPath(t *testing.T) {
	tests := map[string]string{
		"/Users/ada/.colima/default/docker.sock": EngineColima,
		"/Users/ada/.docker/run/docker.sock":     EngineDockerDesktop,
		"/Users/ada/.orbstack/run/docker.sock":   EngineOrbStack,
		"/Users/ada/.rd/docker.sock":             EngineRancherDesktop,
		"/run/podman/podman.sock":                EnginePodman,
		"/var/run/docker.sock.real":              "",
	}
	for p, want := range tests {
		if got := hintForPath(p); got != want {
			t.Errorf("hintForPath(%q) = %q, want %q", p, got, want)
		}
	}
}
