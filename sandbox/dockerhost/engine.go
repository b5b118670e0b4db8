package dockerhost

import (
	"strings"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/system"
)

// Engine names reported in Candidate.Engine.
const (
	EngineDockerDesktop  = "Docker Desktop"
	EngineOrbStack       = "OrbStack"
	EngineColima         = "Colima"
	EngineRancherDesktop = "Rancher Desktop"
	EnginePodman         = "Podman"
	EngineDocker         = "Docker Engine"
)

// engineName names the product behind an endpoint from what it says about
// itself in /version and /info, falling back to what the place it was found
// at implies (hint), and then to plain Docker Engine.
//
// The signs: Podman lists a "Podman Engine" component; Docker Desktop and
// OrbStack put their name in OperatingSystem; Colima's and Rancher
// Desktop's virtual machines are named after them ("colima",
// "colima-<profile>", "lima-rancher-desktop").
func engineName(v types.Version, info system.Info, hint string) string {
	for _, c := range v.Components {
		if strings.Contains(strings.ToLower(c.Name), "podman") {
			return EnginePodman
		}
	}
	osName := strings.ToLower(info.OperatingSystem)
	host := strings.ToLower(info.Name)
	switch {
	case strings.Contains(strings.ToLower(v.Platform.Name), "podman"):
		return EnginePodman
	case strings.Contains(osName, "docker desktop"):
		return EngineDockerDesktop
	case strings.Contains(osName, "orbstack") || host == "orbstack":
		return EngineOrbStack
	case host == "colima" || strings.HasPrefix(host, "colima-"):
		return EngineColima
	case strings.Contains(host, "rancher-desktop") || strings.Contains(osName, "rancher desktop"):
		return EngineRancherDesktop
	case hint != "":
		return hint
	}
	return EngineDocker
}
