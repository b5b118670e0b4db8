// Package traymenu describes the tray's menu and chooses its icon from the
// tray's state, without any toolkit, so both can be checked without a
// desktop and the idle tray links no GUI library:
//
//	Docker: Colima · 2 sandboxes
//	──────────
//	1 sandbox waits for your answer ▸   (only while a server asks the person)
//	    Sandbox 3f2a9c01… (python, Claude Desktop) wants to reach pypi.org:443.
//	    Allow pypi.org:443 for this sandbox / Always allow … / Deny …
//	Start               (only while paused)
//	Pause ▸             (only while running)
//	    Servers refuse new sandboxes until Start   (a note)
//	    Stop 2 sandboxes and pause                 (the confirmation)
//	Open MCP Sandbox
//	Clients ▸           (✓ beside each configured client)
//	Stop all sandboxes
//	Check for updates   (now; the setting checks daily by itself)
//	Install MCP Sandbox 1.2.3…   (only while a newer release is offered)
//	Move to Applications…   (only on macOS, run from the disk image or a
//	                         translocated copy)
//	──────────
//	Quit
//
// The items are always the same ones in the same order (the install item
// is hidden, not removed), so a tray library that keeps items by identity
// can update them in place.
//
// Pause removes every sandbox, other clients' too, and cannot be undone
// (a removed sandbox's files are gone), so it is confirmed where it was
// chosen: the Pause submenu's one action names what it stops ("Stop 2
// sandboxes and pause"), and closing the menu cancels. No window opens
// for it.
//
// Imports: app/sandboxwatch, assets
package traymenu
