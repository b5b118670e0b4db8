package trayapp

import (
	"os/exec"
	"strconv"
)

// sendNotification shows a notification through Notification Center
// (osascript's display notification).
func sendNotification(title, body string) error {
	script := "display notification " + strconv.Quote(body) + " with title " + strconv.Quote(title)
	return exec.Command("osascript", "-e", script).Run()
}
