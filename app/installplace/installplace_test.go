package installplace

import "testing"

func TestOf(t *testing.T) {
	const exe = "/Contents/MacOS/mcp-sandbox-tray"
	for _, tc := range []struct {
		name, goos, exe string
		readOnly        bool
		want            Kind
		bundle, dest    string
	}{
		{"the disk image", "darwin", "/Volumes/MCP Sandbox/MCP Sandbox.app" + exe, true, DiskImage,
			"/Volumes/MCP Sandbox/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"the server in the disk image", "darwin", "/Volumes/MCP Sandbox/MCP Sandbox.app/Contents/MacOS/mcp-sandbox", true, DiskImage,
			"/Volumes/MCP Sandbox/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"translocated", "darwin", "/private/var/folders/x5/k9/T/AppTranslocation/5C1F0E2A-0D1B-4C7E-9B7A-3E2F1A0B9C8D/d/MCP Sandbox.app" + exe, true, Translocated,
			"/private/var/folders/x5/k9/T/AppTranslocation/5C1F0E2A-0D1B-4C7E-9B7A-3E2F1A0B9C8D/d/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"Applications", "darwin", "/Applications/MCP Sandbox.app" + exe, false, Stays, "/Applications/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"the user's Applications", "darwin", "/Users/ann/Applications/MCP Sandbox.app" + exe, false, Stays, "/Users/ann/Applications/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"Downloads", "darwin", "/Users/ann/Downloads/MCP Sandbox.app" + exe, false, Stays, "/Users/ann/Downloads/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"a writable external disk", "darwin", "/Volumes/Work/Apps/MCP Sandbox.app" + exe, false, Stays, "/Volumes/Work/Apps/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"a renamed bundle", "darwin", "/Volumes/MCP Sandbox 2/MCP Sandbox copy.app" + exe, true, DiskImage,
			"/Volumes/MCP Sandbox 2/MCP Sandbox copy.app", "/Applications/MCP Sandbox copy.app"},
		{"not a bundle, from a disk image", "darwin", "/Volumes/tools/mcp-sandbox", true, DiskImage, "", ""},
		{"dot-dot does not hide /Volumes", "darwin", "/Applications/../Volumes/MCP Sandbox/MCP Sandbox.app" + exe, true, DiskImage,
			"/Volumes/MCP Sandbox/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"a name that only looks like it", "darwin", "/Users/ann/AppTranslocation-notes/MCP Sandbox.app" + exe, false, Stays,
			"/Users/ann/AppTranslocation-notes/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"relative", "darwin", "Volumes/x/MCP Sandbox.app" + exe, true, Stays, "Volumes/x/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"Linux has no /Volumes rule", "linux", "/Volumes/MCP Sandbox/MCP Sandbox.app" + exe, true, Stays,
			"/Volumes/MCP Sandbox/MCP Sandbox.app", "/Applications/MCP Sandbox.app"},
		{"Linux", "linux", "/usr/bin/mcp-sandbox-tray", true, Stays, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Of(tc.goos, tc.exe, tc.readOnly)
			if p.Kind != tc.want || p.Bundle != tc.bundle || p.Destination() != tc.dest || p.Exe != tc.exe {
				t.Errorf("Of(%q, %q, %v) = %+v, destination %q; want kind %v, bundle %q, destination %q",
					tc.goos, tc.exe, tc.readOnly, p, p.Destination(), tc.want, tc.bundle, tc.dest)
			}
			if p.Transient() != (tc.want != Stays) || (p.Message() != "") != p.Transient() {
				t.Errorf("Transient %v, Message %q", p.Transient(), p.Message())
			}
		})
	}
}

// TestHereOnThisSystem: off macOS nothing is transient, and there is
// nothing to move.
func TestHereOnThisSystem(t *testing.T) {
	if goos == "darwin" {
		t.Skip("macOS: the rules are TestOf's")
	}
	p := Here("/Volumes/MCP Sandbox/MCP Sandbox.app/Contents/MacOS/mcp-sandbox-tray")
	if p.Transient() {
		t.Errorf("Here = %+v on %s", p, goos)
	}
	if _, err := MoveToApplications(Of("darwin", "/Volumes/x/X.app/Contents/MacOS/x", true)); err != ErrUnsupported {
		t.Errorf("MoveToApplications: %v", err)
	}
}
