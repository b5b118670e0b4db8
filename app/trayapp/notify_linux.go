package trayapp

import (
	"github.com/godbus/dbus/v5"
)

// sendNotification shows a notification through the desktop's
// org.freedesktop.Notifications service on the session bus. Without a
// bus or a service it returns the error (the tray logs it and goes on).
func sendNotification(title, body string) error {
	conn, err := dbus.SessionBus()
	if err != nil {
		return err
	}
	obj := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	return obj.Call("org.freedesktop.Notifications.Notify", 0,
		"MCP Sandbox", uint32(0), "mcp-sandbox", title, body, []string{},
		map[string]dbus.Variant{}, int32(-1)).Err
}
