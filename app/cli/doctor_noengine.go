package cli

import "github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"

// nothingInstalled reports whether detection found no trace of an engine:
// none answered, none was chosen explicitly, and no probed socket exists.
// Then the doctor says what to install rather than what to start.
func nothingInstalled(r *dockerhost.Result) bool {
	if r.Chosen != nil {
		return false
	}
	listed, _ := r.Shown()
	return len(listed) == 0
}

// installAdvice names the engines that work, per OS, with the command
// that installs each where there is one. MCP Sandbox's own packages depend
// on none of them (so they never replace the engine a user has): this is
// where a user without one learns what to add.
func installAdvice(goos string) string {
	switch goos {
	case "darwin":
		return "install one of Docker Desktop (https://docs.docker.com/desktop/), OrbStack, Rancher Desktop, Podman Desktop, or Colima (`brew install colima docker && colima start`)"
	case "windows":
		return "install Docker Desktop (https://docs.docker.com/desktop/), Rancher Desktop or Podman Desktop"
	}
	return "install one of Docker Engine (Debian/Ubuntu: `sudo apt install docker.io`, or docker-ce from Docker's repository), Docker Desktop for Linux, or Podman (`sudo apt install podman-docker`, then `systemctl --user enable --now podman.socket`)"
}
