package mcpserver

import (
	"fmt"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// The instructions stay within 1 KB however long the config's lists: the
// allowed hosts and the roots they name are cut to these many bytes.
const (
	maxHostsText = 250
	maxRootsText = 100
)

// instructionsFor is what the server says of itself at initialize, from
// the config in force: what it is, how to use it, and the settings no
// tool schema says (the host paths it may read and write, the network).
// The limits are in the tools' schemas, not repeated here.
func instructionsFor(cfg *config.Config) string {
	var b strings.Builder
	b.WriteString("MCP Sandbox runs code in disposable hardened containers on the person's computer.\n")
	b.WriteString("run_code for one-off code; sandbox_create, then run_code/sandbox_exec with its sandbox_id to keep files and state; sandbox_stop when done. Sandbox paths are relative to /workspace (/tmp too).\n")
	fmt.Fprintf(&b, "copy_in reads below %s; copy_out writes below %s.\n",
		listText(cfg.Files.ReadRoots, maxRootsText, "nothing"), listText([]string{cfg.Files.WriteRoot}, maxRootsText, "nothing"))
	fmt.Fprintf(&b, "Network: %s by default. allowlist reaches %s", cfg.Network.Default, listText(cfg.Network.AllowDomains, maxHostsText, "no host by default"))
	if cfg.Network.Ask {
		b.WriteString("; the person can be asked for more (allow_domains).")
	} else {
		b.WriteString("; no other host (the person cannot be asked).")
	}
	return b.String()
}

// listText lists items, cut to about max bytes ("and N more"); none when
// there are none.
func listText(items []string, max int, none string) string {
	if len(items) == 0 {
		return none
	}
	var b strings.Builder
	for i, it := range items {
		if b.Len()+len(it) > max {
			if i == 0 {
				b.WriteString(strings.ToValidUTF8(it[:max], "") + "…")
				i++
			}
			if i < len(items) {
				fmt.Fprintf(&b, " and %d more", len(items)-i)
			}
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it)
	}
	return b.String()
}
