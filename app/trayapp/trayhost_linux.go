package trayapp

import (
	"github.com/godbus/dbus/v5"
)

// watcherName is the bus name of the tray host (the StatusNotifierWatcher
// that GNOME's AppIndicator extension, KDE Plasma, Xfce and others run).
const watcherName = "org.kde.StatusNotifierWatcher"

// probeTrayHost connects to the session bus the way the tray library will
// and asks whether a tray host is there. Without a bus the tray must not be
// enabled at all (Fyne's tray panics on Quit then); without a host the
// tray works but nobody shows it, so the window stays the way in.
func probeTrayHost() trayHost {
	conn, err := dbus.SessionBusPrivate()
	if err != nil {
		return trayHost{Why: "no D-Bus session bus: " + err.Error()}
	}
	defer conn.Close()
	if err := conn.Auth(nil); err != nil {
		return trayHost{Why: "D-Bus session bus refused us: " + err.Error()}
	}
	if err := conn.Hello(); err != nil {
		return trayHost{Why: "D-Bus session bus refused us: " + err.Error()}
	}
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, watcherName).Store(&has); err != nil {
		return trayHost{Bus: true, Why: "cannot ask the bus for a tray host: " + err.Error()}
	}
	if !has {
		return trayHost{Bus: true, Why: "no tray host (" + watcherName + ") on the session bus"}
	}
	return trayHost{Bus: true, Watcher: true, Why: "a tray host is on the session bus"}
}
