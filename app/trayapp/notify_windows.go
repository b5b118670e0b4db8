package trayapp

import "errors"

// sendNotification: Windows toasts need an AppUserModelID registered by
// the installer; until then the tray only logs what it would say.
func sendNotification(title, body string) error {
	return errors.New("notifications are not shown on Windows yet")
}
