package trayapp

import (
	"bytes"
	"encoding/binary"

	"fyne.io/systray"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// setTrayIcon shows the colour icon, with the red badge while a failed
// call waits to be seen; the notification area takes .ico data, and an
// .ico may hold a PNG as is.
func setTrayIcon(state string, alert bool) {
	icon := assets.TrayPNG(state, 32)
	if alert {
		icon = assets.AlertPNG(icon, assets.AlertRed)
	}
	systray.SetIcon(pngICO(icon, 32))
}

// setTrayTitle sets the tooltip (the notification area has no title).
func setTrayTitle(title string) { systray.SetTooltip(title) }

// pngICO wraps one size×size PNG in an .ico container.
func pngICO(png []byte, size int) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, []uint16{0, 1, 1}) // reserved, type icon, one image
	b.Write([]byte{byte(size), byte(size), 0, 0})            // width, height, colours, reserved
	binary.Write(&b, binary.LittleEndian, []uint16{1, 32})   // planes, bits per pixel
	binary.Write(&b, binary.LittleEndian, []uint32{uint32(len(png)), 22})
	b.Write(png)
	return b.Bytes()
}
