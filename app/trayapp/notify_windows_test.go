package trayapp

import (
	"os"
	"runtime"
	"testing"
	"unsafe"

	"fyne.io/systray"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// The Windows tests run with a real notification-area icon, put up by
// fyne.io/systray as the tray does, on this (the main, locked) thread;
// packaging/windows/test/wine.sh runs them under Wine.
func TestMain(m *testing.M) {
	code := 1
	systray.Run(func() {
		setTrayIcon(assets.States[0], false)
		setTrayTitle("MCP Sandbox (test)")
		go func() {
			code = m.Run()
			systray.Quit()
		}()
	}, nil)
	os.Exit(code)
}

func TestNotifyIconDataSize(t *testing.T) {
	// NOTIFYICONDATAW's size is how the shell knows its version: 976
	// bytes on 64-bit Windows (956 on 32-bit).
	want := uintptr(976)
	if runtime.GOARCH == "386" {
		want = 956
	}
	if got := unsafe.Sizeof(notifyIconData{}); got != want {
		t.Fatalf("sizeof NOTIFYICONDATAW = %d, want %d", got, want)
	}
}

func TestSendNotificationWindows(t *testing.T) {
	// The tray's icon window is found in this process (fyne.io/systray's
	// class name), and the shell takes a balloon on its icon (ID 100).
	if trayIconWindow() == 0 {
		t.Fatalf("no window of class %q in this process: fyne.io/systray changed?", systrayClass)
	}
	for _, msg := range []string{
		"Docker is not reachable: sandboxes cannot start. No engine answered.",
		"MCP Sandbox 9.9.9 is available: choose “Install 9.9.9” in the tray menu.",
	} {
		if err := sendNotification("MCP Sandbox", msg); err != nil {
			t.Errorf("sendNotification(%q): %v", msg, err)
		}
	}
	// A wrong icon ID is refused: the call's result is not ignored.
	nid := notifyIconData{Wnd: trayIconWindow(), ID: systrayIconID + 1, Flags: nifInfo}
	nid.Size = uint32(unsafe.Sizeof(nid))
	nid.InfoTitle, nid.Info = balloonText("MCP Sandbox", "no such icon")
	if r, _, _ := procShellNotifyIcon.Call(nimModify, uintptr(unsafe.Pointer(&nid))); r != 0 {
		t.Errorf("Shell_NotifyIcon took a balloon for icon %d, which does not exist", nid.ID)
	}
}
