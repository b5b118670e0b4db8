//go:build !darwin

package icons

import (
	"fyne.io/fyne/v2"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// trayResource is the colour tray icon Linux and Windows panels show.
func trayResource(s State) fyne.Resource {
	return fyne.NewStaticResource("mcp-sandbox-"+s.String()+".png", assets.TrayPNG(s.String(), 64))
}
