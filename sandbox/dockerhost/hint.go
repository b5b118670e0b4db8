package dockerhost

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// hint says what to do when nothing was chosen explicitly and no known
// place answered: start an engine, naming the one that seems installed and
// every place that was tried.
func (r *Result) hint(s settings) string {
	var parts []string
	var started []string
	suggest := func(s string) {
		if !slices.Contains(started, s) {
			started = append(started, s)
		}
	}
	for _, c := range r.Candidates {
		p, isSocket := unixPath(c.Host)
		switch {
		case c.OK || c.Explicit:
		case strings.HasPrefix(c.Error, "permission denied"):
			parts = append(parts, fmt.Sprintf("You may not use %s: add your user to the docker group (sudo usermod -aG docker $USER) and log in again, or run rootless Docker.", p))
		case c.hint == EngineColima && isSocket && exists(path.Dir(p)):
			if name := path.Base(path.Dir(p)); name == "default" {
				suggest("run `colima start`")
			} else {
				suggest(fmt.Sprintf("run `colima start --profile %s`", name))
			}
		case c.Missing:
		case c.hint == EnginePodman:
			if strings.Contains(c.Source, "machine") {
				suggest("run `podman machine start`")
			} else {
				suggest("start Podman's API socket (`systemctl --user start podman.socket`)")
			}
		case c.hint != "":
			suggest("start " + c.hint)
		}
	}
	if len(started) > 0 {
		parts = append(parts, fmt.Sprintf("An engine seems installed but not running: %s.", strings.Join(started, ", or ")))
	} else {
		parts = append(parts, genericHint(s.goos))
	}
	var tried []string
	for _, c := range r.Candidates {
		if p, ok := unixPath(c.Host); ok {
			tried = append(tried, p)
		} else if c.Host != "" {
			tried = append(tried, c.Host)
		}
	}
	if len(tried) > 0 {
		parts = append(parts, "Tried: "+strings.Join(tried, ", ")+".")
	}
	return strings.Join(parts, " ")
}

// genericHint says how to get an engine running on goos.
func genericHint(goos string) string {
	switch goos {
	case "darwin":
		return "Start Docker Desktop, OrbStack or Rancher Desktop, or run `colima start` or `podman machine start`; or set DOCKER_HOST, or choose an engine with `docker context use NAME`."
	case "windows":
		return "Start Docker Desktop or Rancher Desktop, or run `podman machine start`; or set DOCKER_HOST, or choose an engine with `docker context use NAME`."
	}
	return "Start Docker (`sudo systemctl start docker`), Docker Desktop, or `colima start`, or Podman's API socket (`systemctl --user start podman.socket`); or set DOCKER_HOST, or choose an engine with `docker context use NAME`."
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
