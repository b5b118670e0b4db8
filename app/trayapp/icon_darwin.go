package trayapp

import (
	"fyne.io/systray"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// setTrayIcon shows the monochrome template image the menu bar tints.
func setTrayIcon(state string) {
	systray.SetTemplateIcon(assets.TemplatePNG(state, 44), assets.TrayPNG(state, 44))
}

// setTrayTitle sets the tooltip only: a title would be text in the menu
// bar beside the icon.
func setTrayTitle(title string) { systray.SetTooltip(title) }
