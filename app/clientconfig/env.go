package clientconfig

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// Env is the part of the outside world that decides where clients keep
// their configuration: the operating system and the environment variables.
// Passing it in, rather than reading the process's own, lets tests use a
// temporary home and check the Windows and macOS layouts on any machine.
type Env struct {
	// GOOS is the operating system whose conventions apply ("linux",
	// "darwin", "windows"); empty means the running one.
	GOOS string
	// Getenv reads an environment variable; nil means os.Getenv.
	Getenv func(string) string
}

// OSEnv returns the running process's operating system and environment.
func OSEnv() Env {
	return Env{GOOS: runtime.GOOS, Getenv: os.Getenv}
}

func (e Env) goos() string {
	if e.GOOS != "" {
		return e.GOOS
	}
	return runtime.GOOS
}

func (e Env) getenv(k string) string {
	if e.Getenv != nil {
		return e.Getenv(k)
	}
	return os.Getenv(k)
}

// native reports whether paths built for e can be used on this machine.
func (e Env) native() bool { return e.goos() == runtime.GOOS }

var errNoHome = errors.New("cannot tell the home directory: HOME is not set")

// home is HOME, which every client's paths hang from. On Windows, where HOME
// is usually unset, USERPROFILE stands in for it.
func (e Env) home() (string, error) {
	h := e.getenv("HOME")
	if h == "" && e.goos() == "windows" {
		h = e.getenv("USERPROFILE")
	}
	if h == "" {
		return "", errNoHome
	}
	return h, nil
}

// join joins path elements with the separator of e's operating system, so
// that Windows paths come out with backslashes even when built elsewhere.
func (e Env) join(elem ...string) string {
	switch {
	case e.native():
		return filepath.Join(elem...)
	case e.goos() == "windows":
		parts := make([]string, 0, len(elem))
		for i, p := range elem {
			if i > 0 {
				p = strings.TrimLeft(p, `\`)
			}
			if i < len(elem)-1 {
				p = strings.TrimRight(p, `\`)
			}
			if p != "" {
				parts = append(parts, p)
			}
		}
		return strings.Join(parts, `\`)
	default:
		return path.Join(elem...)
	}
}

// isAbs reports whether p is absolute by the rules of e's operating system.
func (e Env) isAbs(p string) bool {
	if e.native() {
		return filepath.IsAbs(p)
	}
	if e.goos() == "windows" {
		return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') || strings.HasPrefix(p, `\\`)
	}
	return strings.HasPrefix(p, "/")
}

// fromHome joins elem under the home directory.
func (e Env) fromHome(elem ...string) (string, error) {
	h, err := e.home()
	if err != nil {
		return "", err
	}
	return e.join(append([]string{h}, elem...)...), nil
}

// appData is %APPDATA% (roaming), defaulting to the standard place under
// the profile.
func (e Env) appData() (string, error) {
	if d := e.getenv("APPDATA"); d != "" {
		return d, nil
	}
	return e.fromHome("AppData", "Roaming")
}

// localAppData is %LOCALAPPDATA%, defaulting to the standard place under
// the profile.
func (e Env) localAppData() (string, error) {
	if d := e.getenv("LOCALAPPDATA"); d != "" {
		return d, nil
	}
	return e.fromHome("AppData", "Local")
}

// xdgConfigHome is $XDG_CONFIG_HOME when it is absolute (the specification
// says to ignore a relative one), else ~/.config.
func (e Env) xdgConfigHome() (string, error) {
	if d := e.getenv("XDG_CONFIG_HOME"); d != "" && e.isAbs(d) {
		return d, nil
	}
	return e.fromHome(".config")
}

// userConfigDir is where desktop applications keep per-user settings:
// ~/Library/Application Support, %APPDATA%, or the XDG config home.
func (e Env) userConfigDir() (string, error) {
	switch e.goos() {
	case "darwin":
		return e.fromHome("Library", "Application Support")
	case "windows":
		return e.appData()
	default:
		return e.xdgConfigHome()
	}
}

// lookPath finds an executable named name on e's PATH. It only looks when e
// describes this machine, and reports "" otherwise.
func (e Env) lookPath(name string) string {
	if !e.native() {
		return ""
	}
	exts := []string{""}
	if e.goos() == "windows" {
		exts = strings.Split(strings.ToLower(e.getenv("PATHEXT")), ";")
		if e.getenv("PATHEXT") == "" {
			exts = []string{".com", ".exe", ".bat", ".cmd"}
		}
	}
	for _, dir := range filepath.SplitList(e.getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		for _, ext := range exts {
			p := filepath.Join(dir, name+ext)
			if isExecutable(p) {
				return p
			}
		}
	}
	return ""
}

// isExecutable reports whether p is a regular file this user may run.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}

// exists reports whether p names anything at all.
func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
