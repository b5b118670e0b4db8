package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
)

// connectCard is "Connect a client": for a client the Clients tab does not
// configure, the MCP config to paste, copied with one press: the bundled
// server's absolute path for stdio, and the URL and token when the tray's
// HTTP server is on.
func (t *StatusTab) connectCard(info StatusInfo) fyne.CanvasObject {
	note := wrapped("For a client not listed under Clients: copy its MCP configuration and paste it into the client's settings.")
	copied := widget.NewLabel("")
	copyBtn := func(label, text string) *widget.Button {
		return widget.NewButtonWithIcon(label, theme.ContentCopyIcon(), func() {
			fyne.CurrentApp().Clipboard().SetContent(text)
			copied.SetText("Copied.")
		})
	}
	rows := []fyne.CanvasObject{note}
	if info.ServerErr == "" && info.Server.Path != "" {
		rows = append(rows, container.NewHBox(copyBtn("Copy stdio config", clientconfig.StdioSnippet(info.Server.Path))))
	}
	if info.HTTP.Enabled && info.HTTP.URL != "" {
		rows = append(rows, container.NewHBox(copyBtn("Copy HTTP config (URL and token)", clientconfig.HTTPSnippet(info.HTTP.URL, info.HTTP.Token))))
	}
	if len(rows) == 1 {
		return nil
	}
	return widget.NewCard("Connect a client", "", container.NewVBox(append(rows, copied)...))
}
