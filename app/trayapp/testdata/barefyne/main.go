// Command barefyne is TestIdleCost's baseline: a Fyne window with one
// label and nothing else, the size of MCP Sandbox's window, so that the
// window's idle cost can be read against what Fyne itself costs on the
// same machine and X server (its driver wakes 60 times a second whatever
// the window shows).
package main

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/widget"
)

func main() {
	a := app.NewWithID("io.mcp-sandbox.test.barefyne")
	w := a.NewWindow("bare Fyne")
	w.SetContent(widget.NewLabel("A bare Fyne window: the baseline of the idle-cost test."))
	w.Resize(fyne.NewSize(1120, 700))
	w.ShowAndRun()
}
