package installplace

import (
	"errors"
	"path"
	"strings"
)

// Kind says why a place is not one to stay in.
type Kind int

const (
	// Stays is any place the app may run from for good.
	Stays Kind = iota
	// DiskImage is a read-only volume under /Volumes: the .dmg it came in.
	DiskImage
	// Translocated is macOS's App Translocation copy.
	Translocated
)

// ApplicationsDir is where MoveToApplications puts the app.
const ApplicationsDir = "/Applications"

// ErrUnsupported is returned by MoveToApplications and Relaunch where
// there is nothing to move (any system but macOS).
var ErrUnsupported = errors.New("installplace: only on macOS")

// Place is where the program runs from.
type Place struct {
	Kind Kind
	// Exe is the program's path.
	Exe string
	// Bundle is the .app that holds Exe, or "" when it is not in one.
	Bundle string
}

// Transient reports whether the place will vanish (eject, restart).
func (p Place) Transient() bool { return p.Kind != Stays }

// Message says what is wrong and what to do, for a dialog or the log.
func (p Place) Message() string {
	switch p.Kind {
	case DiskImage:
		return "MCP Sandbox is running from its disk image. Move it to Applications first: AI clients set up from here would lose it once the disk image is ejected."
	case Translocated:
		return "MCP Sandbox is running from a temporary copy macOS made (App Translocation). Move it to Applications first: AI clients set up from here would lose it at the next restart."
	}
	return ""
}

// Destination is where MoveToApplications copies the bundle.
func (p Place) Destination() string {
	if p.Bundle == "" {
		return ""
	}
	return path.Join(ApplicationsDir, path.Base(p.Bundle))
}

// Of classifies exe as seen on goos; readOnly says whether its file system
// is mounted read-only (a disk image's is; an external disk, also under
// /Volumes, is usually not, and is a place to stay).
func Of(goos, exe string, readOnly bool) Place {
	p := Place{Exe: exe, Bundle: bundleOf(exe)}
	if goos != "darwin" || !path.IsAbs(exe) {
		return p
	}
	clean := path.Clean(exe)
	switch {
	case strings.Contains(clean, "/AppTranslocation/"):
		p.Kind = Translocated
	case strings.HasPrefix(clean, "/Volumes/") && readOnly:
		p.Kind = DiskImage
	}
	return p
}

// Here classifies exe on this system (see Of).
func Here(exe string) Place { return Of(goos, exe, readOnlyFS(exe)) }

// bundleOf is the outermost X.app of a path …/X.app/Contents/…, or "".
func bundleOf(exe string) string {
	clean := path.Clean(exe)
	i := strings.Index(clean, ".app/Contents/")
	if i < 0 {
		return ""
	}
	return clean[:i+len(".app")]
}
