package assets

import (
	"embed"
	"fmt"
	"slices"
)

// Files holds the SVG sources and the PNGs rendered from them. The ICO
// and ICNS beside them are for the installers, not embedded.
//
//go:embed svg/*.svg png/*.png
var Files embed.FS

// The service states the tray icon shows, as used in the file names.
const (
	Running       = "running"
	Paused        = "paused"
	DockerMissing = "docker-missing"
)

// States lists every tray state.
var States = []string{Running, Paused, DockerMissing}

// Sizes, in pixels, of each kind of PNG.
var (
	AppSizes      = []int{16, 24, 32, 48, 64, 128, 256, 512, 1024}
	TraySizes     = []int{32, 64}
	TemplateSizes = []int{22, 44} // 1x and 2x of the 22 pt menu bar
)

// AppSVG returns the application icon's SVG source.
func AppSVG() []byte { return mustRead("svg/app.svg") }

// AppPNG returns the application icon at size×size pixels, one of
// AppSizes. Sizes below 32 use the simplified art of svg/app-small.svg.
func AppPNG(size int) []byte {
	mustHave("app icon size", size, AppSizes)
	return mustRead(fmt.Sprintf("png/app-%d.png", size))
}

// TrayPNG returns the colour tray icon for state (one of States) at one of
// TraySizes: the app icon with a badge whose colour says the state. Linux
// and Windows show these.
func TrayPNG(state string, size int) []byte {
	mustHave("tray state", state, States)
	mustHave("tray icon size", size, TraySizes)
	return mustRead(fmt.Sprintf("png/tray-%s-%d.png", state, size))
}

// TemplateSVG returns the monochrome macOS menu-bar icon for state. It uses
// only filled <path> elements, so theme.NewThemedResource can recolour it,
// and Fyne hands a themed resource to macOS as a template image.
func TemplateSVG(state string) []byte {
	mustHave("tray state", state, States)
	return mustRead("svg/tray-template-" + state + ".svg")
}

// TemplatePNG returns the monochrome menu-bar icon for state at one of
// TemplateSizes (black on transparency, as macOS template images are).
func TemplatePNG(state string, size int) []byte {
	mustHave("tray state", state, States)
	mustHave("template size", size, TemplateSizes)
	return mustRead(fmt.Sprintf("png/tray-template-%s-%d.png", state, size))
}

// mustHave panics when v is not one of the values the files exist for:
// asking for another is a programming error, which the tests catch.
func mustHave[T comparable](what string, v T, valid []T) {
	if !slices.Contains(valid, v) {
		panic(fmt.Sprintf("assets: no %s %v (have %v)", what, v, valid))
	}
}

func mustRead(name string) []byte {
	b, err := Files.ReadFile(name)
	if err != nil {
		panic("assets: " + err.Error()) // every name above is embedded; TestEveryFile proves it
	}
	return b
}
