//go:build darwin

package icons

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// trayResource is the menu bar's template icon: a themed resource, which
// Fyne hands to macOS as a template image so it follows the menu bar's
// light or dark appearance.
func trayResource(s State) fyne.Resource {
	return theme.NewThemedResource(fyne.NewStaticResource("tray-"+s.String()+".svg", assets.TemplateSVG(s.String())))
}
