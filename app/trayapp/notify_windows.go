package trayapp

import (
	"errors"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a notification is a balloon on the tray's own notification-
// area icon (Shell_NotifyIcon with NIF_INFO), which Windows 10 and 11 show
// as a toast and keep in the notification centre. It needs nothing
// registered, so it works for this unpackaged, per-user program (a toast
// of its own would need an AppUserModelID registered by the installer and
// a Start-menu shortcut carrying it).
//
// The icon belongs to fyne.io/systray, which does not export it: its
// hidden window is of class systrayClass in this process, and the icon's
// ID is systrayIconID (fyne.io/systray v1.12, systray_windows.go
// initInstance). TestSendNotificationWindows, run under Wine by
// packaging/windows/test/wine.sh, fails if that changes.
const (
	systrayClass  = "SystrayClass"
	systrayIconID = 100

	nimModify            = 0x1
	nifInfo              = 0x10
	niifInfo             = 0x1
	niifRespectQuietTime = 0x80
)

// notifyIconData is NOTIFYICONDATAW (shellapi.h), the version with
// guidItem and hBalloonIcon.
type notifyIconData struct {
	Size             uint32
	Wnd              windows.HWND
	ID               uint32
	Flags            uint32
	CallbackMessage  uint32
	Icon             windows.Handle
	Tip              [128]uint16
	State, StateMask uint32
	Info             [balloonBodyLen]uint16
	TimeoutOrVersion uint32
	InfoTitle        [balloonTitleLen]uint16
	InfoFlags        uint32
	GUIDItem         windows.GUID
	BalloonIcon      windows.Handle
}

var procShellNotifyIcon = windows.NewLazySystemDLL("shell32.dll").NewProc("Shell_NotifyIconW")

// iconWait is how long a notification waits for the icon: the first ones
// (Docker not found) may come while the tray is still putting it up.
const iconWait = 10 * time.Second

// sendNotification shows title and body in a balloon on the tray icon.
func sendNotification(title, body string) error {
	nid := notifyIconData{ID: systrayIconID, Flags: nifInfo, InfoFlags: niifInfo | niifRespectQuietTime}
	nid.Size = uint32(unsafe.Sizeof(nid))
	nid.InfoTitle, nid.Info = balloonText(title, body)
	deadline := time.Now().Add(iconWait)
	for {
		nid.Wnd = trayIconWindow()
		if nid.Wnd != 0 {
			r, _, _ := procShellNotifyIcon.Call(nimModify, uintptr(unsafe.Pointer(&nid)))
			if r != 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if nid.Wnd == 0 {
		return errors.New("no notification-area icon to show it on (the tray's icon window is not there)")
	}
	return errors.New("the notification area refused the balloon (Shell_NotifyIcon failed)")
}

var (
	enumMu     sync.Mutex // guards enumFound, one EnumWindows at a time
	enumFound  windows.HWND
	enumOnce   sync.Once
	enumWindow uintptr // the EnumWindows callback, made once (callbacks are never freed)
)

// trayIconWindow is fyne.io/systray's hidden window in this process, or 0.
func trayIconWindow() windows.HWND {
	enumOnce.Do(func() {
		pid := uint32(os.Getpid())
		enumWindow = windows.NewCallback(func(h windows.HWND, _ uintptr) uintptr {
			var owner uint32
			if _, err := windows.GetWindowThreadProcessId(h, &owner); err != nil || owner != pid {
				return 1
			}
			var buf [64]uint16
			n, err := windows.GetClassName(h, &buf[0], int32(len(buf)))
			if err != nil || windows.UTF16ToString(buf[:n]) != systrayClass {
				return 1
			}
			enumFound = h
			return 0 // found: stop
		})
	})
	enumMu.Lock()
	defer enumMu.Unlock()
	enumFound = 0
	windows.EnumWindows(enumWindow, nil) // an error only says the callback stopped it
	return enumFound
}
