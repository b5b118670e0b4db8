package trayapp

import (
	"fyne.io/systray"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// setTrayIcon shows the colour icon for a state (the panels scale it).
func setTrayIcon(state string) { systray.SetIcon(assets.TrayPNG(state, 64)) }

// setTrayTitle sets the StatusNotifierItem's title and tooltip.
func setTrayTitle(title string) {
	systray.SetTitle(title)
	systray.SetTooltip(title)
}
