package trayapp

import (
	"fyne.io/systray"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// setTrayIcon shows the colour icon for a state (the panels scale it),
// with the red badge while a failed call waits to be seen.
func setTrayIcon(state string, alert bool) {
	icon := assets.TrayPNG(state, 64)
	if alert {
		icon = assets.AlertPNG(icon, assets.AlertRed)
	}
	systray.SetIcon(icon)
}

// setTrayTitle sets the StatusNotifierItem's title and tooltip.
func setTrayTitle(title string) {
	systray.SetTitle(title)
	systray.SetTooltip(title)
}
