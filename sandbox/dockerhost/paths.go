package dockerhost

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// knownPlaces lists the endpoints to probe when no explicit one answers,
// most preferred first: the default socket (what the docker CLI would use),
// Docker Desktop, OrbStack, Colima's profiles, Rancher Desktop, rootless
// Docker, then Podman, whose Docker API is the least complete.
//
// Paths depend only on the settings (GOOS, home, environment, Root) and on
// which Colima profiles and Podman machines exist below the home and temp
// directories, so the list can be computed for any GOOS on any machine.
func (s settings) knownPlaces() []Candidate {
	var out []Candidate
	add := func(host, source, engine string) {
		if slices.ContainsFunc(out, func(c Candidate) bool { return c.Host == host }) {
			return
		}
		out = append(out, Candidate{Host: host, Source: source, hint: engine})
	}
	sock := func(p, source, engine string) {
		if p != "" {
			add("unix://"+p, source, engine)
		}
	}

	if s.goos == "windows" {
		add("npipe:////./pipe/docker_engine", "default pipe", "")
		add("npipe:////./pipe/dockerDesktopLinuxEngine", "Docker Desktop", "Docker Desktop")
		add("npipe:////./pipe/podman-machine-default", "Podman (machine podman-machine-default)", "Podman")
		return out
	}

	darwin := s.goos == "darwin"
	runtimeDir := s.getenv("XDG_RUNTIME_DIR")
	userRun := ""
	if !darwin && s.uid != "" {
		userRun = s.system(path.Join("/run/user", s.uid))
	}

	sock(s.system("/var/run/docker.sock"), "default socket", "")
	if darwin {
		sock(s.inHome(".docker/run/docker.sock"), "Docker Desktop", "Docker Desktop")
	} else {
		sock(s.inHome(".docker/desktop/docker.sock"), "Docker Desktop", "Docker Desktop")
	}
	sock(s.inHome(".orbstack/run/docker.sock"), "OrbStack", "OrbStack")
	for _, p := range s.colimaProfiles() {
		sock(path.Join(p.dir, "docker.sock"), "Colima (profile "+p.name+")", "Colima")
	}
	sock(s.inHome(".rd/docker.sock"), "Rancher Desktop", "Rancher Desktop")
	if runtimeDir != "" {
		sock(path.Join(runtimeDir, "docker.sock"), "rootless Docker", "Docker Engine")
	}
	if userRun != "" {
		sock(path.Join(userRun, "docker.sock"), "rootless Docker", "Docker Engine")
	}
	if !darwin {
		sock(s.system("/run/podman/podman.sock"), "Podman (rootful)", "Podman")
	}
	if runtimeDir != "" {
		sock(path.Join(runtimeDir, "podman/podman.sock"), "Podman (rootless)", "Podman")
	}
	if userRun != "" {
		sock(path.Join(userRun, "podman/podman.sock"), "Podman (rootless)", "Podman")
	}
	for _, m := range s.podmanMachines() {
		sock(m.dir, "Podman (machine "+m.name+")", "Podman")
	}
	return out
}

// namedPath is a Colima profile or Podman machine and its path.
type namedPath struct{ name, dir string }

// colimaDirs are the directories Colima may keep its profiles in.
func (s settings) colimaDirs() []string {
	var dirs []string
	for _, d := range []string{
		s.getenv("COLIMA_HOME"),
		s.inHome(".colima"),
		joinIfSet(s.getenv("XDG_CONFIG_HOME"), "colima"),
		s.inHome(".config/colima"),
	} {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// colimaProfiles lists every profile directory in Colima's directories,
// "default" first. With none found, it returns the default profile of the
// first directory, so that the report shows where Colima would be.
func (s settings) colimaProfiles() []namedPath {
	dirs := s.colimaDirs()
	var out []namedPath
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		var names []string
		for _, e := range entries {
			// _lima, _templates and _store are Colima's own, not profiles.
			if e.IsDir() && !strings.HasPrefix(e.Name(), "_") && !strings.HasPrefix(e.Name(), ".") {
				names = append(names, e.Name())
			}
		}
		slices.SortFunc(names, func(a, b string) int {
			switch {
			case a == b:
				return 0
			case a == "default":
				return -1
			case b == "default":
				return 1
			}
			return strings.Compare(a, b)
		})
		for _, n := range names {
			out = append(out, namedPath{name: n, dir: path.Join(d, n)})
		}
	}
	if len(out) == 0 && len(dirs) > 0 {
		out = append(out, namedPath{name: "default", dir: path.Join(dirs[0], "default")})
	}
	return out
}

// podmanMachines lists the API sockets of Podman machines: those under
// ~/.local/share/containers/podman/machine, and on macOS those in the
// per-user temporary directory ($TMPDIR/podman/<machine>-api.sock), the
// default machine first. Here dir is the socket itself.
func (s settings) podmanMachines() []namedPath {
	var out []namedPath
	if s.goos == "darwin" {
		var pattern string
		if tmp := s.getenv("TMPDIR"); tmp != "" {
			pattern = path.Join(tmp, "podman", "*-api.sock")
			out = append(out, namedPath{name: "podman-machine-default", dir: path.Join(tmp, "podman", "podman-machine-default-api.sock")})
		} else {
			// A bare environment has no TMPDIR; macOS's per-user
			// temporary directories are /var/folders/*/*/T, and only our
			// own is readable.
			pattern = s.system("/var/folders/*/*/T/podman/*-api.sock")
		}
		matches, _ := filepath.Glob(pattern)
		slices.Sort(matches)
		for _, m := range matches {
			out = append(out, namedPath{name: strings.TrimSuffix(path.Base(m), "-api.sock"), dir: m})
		}
	}
	if root := s.inHome(".local/share/containers/podman/machine"); root != "" {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && strings.Count(strings.TrimPrefix(p, root), "/") >= 3 {
				return fs.SkipDir
			}
			name := d.Name()
			switch {
			case d.IsDir():
			case name == "podman.sock":
				out = append(out, namedPath{name: path.Base(path.Dir(p)), dir: p})
			case strings.HasSuffix(name, "-api.sock"):
				out = append(out, namedPath{name: strings.TrimSuffix(name, "-api.sock"), dir: p})
			}
			return nil
		})
	}
	// The default machine first; the order of the rest is kept.
	slices.SortStableFunc(out, func(a, b namedPath) int {
		ad, bd := a.name == "podman-machine-default", b.name == "podman-machine-default"
		switch {
		case ad && !bd:
			return -1
		case bd && !ad:
			return 1
		}
		return 0
	})
	return out
}

func joinIfSet(dir, elem string) string {
	if dir == "" {
		return ""
	}
	return path.Join(dir, elem)
}
