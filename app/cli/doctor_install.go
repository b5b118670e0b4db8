package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// installReport is the doctor's view of the installation itself: what a
// fresh install from a release package should have put in place.
type installReport struct {
	Server string `json:"server"` // this program
	// Installed is set when the server sits where a release package puts
	// it, so the tray (and on Linux a menu entry) belongs with it.
	Installed bool   `json:"installed"`
	Tray      string `json:"tray"` // the tray beside the server; "" when absent
	// MissingLibraries are shared libraries the tray needs and this
	// system lacks (Linux).
	MissingLibraries []string `json:"missing_libraries,omitempty"`
	OnPath           bool     `json:"on_path"`              // `mcp-sandbox` in a terminal finds this program
	MenuEntry        string   `json:"menu_entry,omitempty"` // Linux: the .desktop file found
	Notes            []string `json:"notes,omitempty"`      // advice that is not a problem
}

// installProbe is what checkInstall looks at; gatherInstall fills it from
// the running system and tests make it up.
type installProbe struct {
	goos         string
	exe          string // this program, symlinks resolved
	home         string
	localAppData string
	dataDirs     []string // where menu entries live (XDG_DATA_HOME, then XDG_DATA_DIRS)
	lookPath     func(string) (string, error)
	missingLibs  func(ctx context.Context, bin string) []string
}

// desktopEntryName is the menu entry the .deb and install.sh write.
const desktopEntryName = "io.mcp-sandbox.tray.desktop"

// libPackages names the Debian/Ubuntu package of each library the Linux
// tray links, for the hint.
var libPackages = map[string]string{"libGL.so.1": "libgl1", "libX11.so.6": "libx11-6"}

func gatherInstall(e *Env) installProbe {
	p := installProbe{goos: runtime.GOOS, lookPath: exec.LookPath, missingLibs: lddMissing}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p.exe = exe
	}
	p.home, _ = os.UserHomeDir()
	p.localAppData = e.getenv("LOCALAPPDATA")
	dataHome := e.getenv("XDG_DATA_HOME")
	if dataHome == "" && p.home != "" {
		dataHome = filepath.Join(p.home, ".local", "share")
	}
	dirs := e.getenv("XDG_DATA_DIRS")
	if dirs == "" {
		dirs = "/usr/local/share:/usr/share"
	}
	p.dataDirs = append([]string{dataHome}, filepath.SplitList(dirs)...)
	return p
}

// checkInstall reports on the installation and calls problem for each
// missing piece a person has to act on.
func checkInstall(ctx context.Context, p installProbe, problem func(string, ...any)) installReport {
	r := installReport{Server: p.exe}
	if p.exe == "" {
		return r
	}
	dir := filepath.Dir(p.exe)
	r.Installed = installedDir(p, dir)
	ext := ""
	if p.goos == "windows" {
		ext = ".exe"
	}
	if tray := filepath.Join(dir, "mcp-sandbox-tray"+ext); isFile(tray) {
		r.Tray = tray
	}
	if found, err := p.lookPath("mcp-sandbox" + ext); err == nil {
		if real, err := filepath.EvalSymlinks(found); err == nil {
			found = real
		}
		r.OnPath = samePath(p.goos, found, p.exe)
	}

	switch {
	case p.goos == "darwin" && (strings.HasPrefix(p.exe, "/Volumes/") || strings.Contains(p.exe, "/AppTranslocation/")):
		problem("MCP Sandbox runs from the disk image or a temporary copy (%s): drag MCP Sandbox to Applications and start it from there, or AI clients set up now will point at a path that disappears", dir)
	case r.Installed && r.Tray == "":
		problem("the tray app is missing: there is no mcp-sandbox-tray%s beside %s; install the full package for your system from the releases page again", ext, p.exe)
	}
	if p.goos == "linux" && r.Tray != "" && p.missingLibs != nil {
		// The window links the GUI libraries; the tray none beyond libc.
		gui := r.Tray
		if w := filepath.Join(filepath.Dir(r.Tray), "mcp-sandbox-window"+ext); isFile(w) {
			gui = w
		}
		r.MissingLibraries = p.missingLibs(ctx, gui)
		if len(r.MissingLibraries) > 0 {
			var pkgs []string
			for _, l := range r.MissingLibraries {
				if pkg, ok := libPackages[l]; ok {
					pkgs = append(pkgs, pkg)
				}
			}
			hint := "install them with your package manager"
			if len(pkgs) > 0 {
				hint = "on Debian or Ubuntu: sudo apt install " + strings.Join(pkgs, " ")
			}
			problem("the tray's window cannot start, this system lacks %s: %s (the server itself needs none of them)", strings.Join(r.MissingLibraries, ", "), hint)
		}
	}
	if p.goos == "linux" && r.Installed && r.Tray != "" {
		for _, d := range p.dataDirs {
			if f := filepath.Join(d, "applications", desktopEntryName); d != "" && isFile(f) {
				r.MenuEntry = f
				break
			}
		}
		if r.MenuEntry == "" {
			problem("MCP Sandbox has no entry in the applications menu: run install.sh from the release tarball again (or reinstall the .deb)")
		}
	}
	if r.Installed && !r.OnPath {
		r.Notes = append(r.Notes, fmt.Sprintf("%s is not on PATH: AI clients use its full path, so they work; add %s to PATH to type mcp-sandbox in a terminal", p.exe, dir))
	}
	return r
}

// installedDir reports whether dir is where a release package puts the
// programs: /usr/bin (the .deb), ~/.local/bin or /usr/local/bin (the
// tarball's install.sh), %LOCALAPPDATA%\Programs\MCP Sandbox (the Windows
// installer), or an app bundle's Contents/MacOS.
func installedDir(p installProbe, dir string) bool {
	switch p.goos {
	case "windows":
		return p.localAppData != "" && samePath(p.goos, dir, filepath.Join(p.localAppData, "Programs", "MCP Sandbox"))
	case "darwin":
		return filepath.Base(dir) == "MacOS" && strings.HasSuffix(filepath.Dir(filepath.Dir(dir)), ".app")
	}
	dirs := []string{"/usr/bin", "/usr/local/bin"}
	if p.home != "" {
		dirs = append(dirs, filepath.Join(p.home, ".local", "bin"))
	}
	return slices.ContainsFunc(dirs, func(d string) bool { return filepath.Clean(d) == filepath.Clean(dir) })
}

func samePath(goos, a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if goos == "windows" || goos == "darwin" { // case-insensitive file systems by default
		return strings.EqualFold(a, b)
	}
	return a == b
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// lddMissing lists the shared libraries bin needs that the dynamic loader
// cannot find, as ldd reports them ("libGL.so.1 => not found").
func lddMissing(ctx context.Context, bin string) []string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ldd", bin).Output()
	if err != nil && len(out) == 0 {
		return nil // no ldd (musl, or not a dynamic binary): nothing to say
	}
	var missing []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, rest, ok := strings.Cut(strings.TrimSpace(line), " => "); ok && strings.TrimSpace(rest) == "not found" {
			missing = append(missing, name)
		}
	}
	return missing
}

func printInstall(w io.Writer, r installReport) {
	fmt.Fprintln(w, "\nInstall")
	tray := r.Tray
	if tray == "" {
		tray = "not beside the server"
	}
	fmt.Fprintf(w, "  server:     %s (on PATH: %v)\n", r.Server, r.OnPath)
	fmt.Fprintf(w, "  tray:       %s\n", tray)
	if r.MenuEntry != "" {
		fmt.Fprintf(w, "  menu entry: %s\n", r.MenuEntry)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note:       %s\n", n)
	}
}
