// Package assets is the one home of MCP Sandbox's icons: the SVG sources in
// svg/ and the PNG sizes rendered from them by generate.sh. The tray embeds
// them from here, and packaging/ copies the same files (with the ICO and
// ICNS made beside them) into the installers, so every place shows the same
// picture.
//
//	icon := fyne.NewStaticResource("mcp-sandbox.png", assets.AppPNG(256))
//	tray := fyne.NewStaticResource("tray.png", assets.TrayPNG(assets.Paused, 64))
//
// The package has no dependencies, so nothing GUI-related reaches whoever
// imports it; the server binary does not.
//
// Imports: none
package assets
