package trayapp

import (
	"image/color"

	"fyne.io/systray"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// setTrayIcon shows the monochrome template image the menu bar tints,
// with a dot while a failed call waits to be seen.
func setTrayIcon(state string, alert bool) {
	tmpl, colour := assets.TemplatePNG(state, 44), assets.TrayPNG(state, 64)
	if alert {
		tmpl, colour = assets.AlertPNG(tmpl, color.Black), assets.AlertPNG(colour, assets.AlertRed)
	}
	systray.SetTemplateIcon(tmpl, colour)
}

// setTrayTitle sets the tooltip only: a title would be text in the menu
// bar beside the icon.
func setTrayTitle(title string) { systray.SetTooltip(title) }
