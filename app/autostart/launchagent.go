package autostart

import (
	"encoding/xml"
	"strings"
)

// agentLabel is the LaunchAgent's label, also the app's bundle id.
const agentLabel = "io.mcp-sandbox.tray"

// agentScript runs at login in place of the tray: it starts the tray when
// it is still there, and otherwise (the app was dragged to the Trash)
// removes its own LaunchAgent, so the login item goes with the app.
// Arguments: the plist's path, then the tray and its arguments.
const agentScript = `p=$1; shift
if [ -x "$1" ]; then exec "$@"; fi
rm -f "$p"
launchctl bootout "gui/$(id -u)/` + agentLabel + `" 2>/dev/null
exit 0`

// launchAgentPlist is the LaunchAgent that starts exe --hidden at login
// through agentScript. AssociatedBundleIdentifiers lets System Settings ▸
// General ▸ Login Items show it as MCP Sandbox rather than as "sh".
func launchAgentPlist(exe, plistPath string) []byte {
	var b strings.Builder
	str := func(s string) {
		b.WriteString("\t\t<string>")
		xml.EscapeText(&b, []byte(s))
		b.WriteString("</string>\n")
	}
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + agentLabel + `</string>
	<key>AssociatedBundleIdentifiers</key>
	<string>` + agentLabel + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, a := range []string{"/bin/sh", "-c", agentScript, "mcp-sandbox-login", plistPath, exe, HiddenFlag} {
		str(a)
	}
	b.WriteString(`	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>ProcessType</key>
	<string>Interactive</string>
</dict>
</plist>
`)
	return []byte(b.String())
}
