package dockerhost

import "strings"

// PinnedHost returns the DOCKER_HOST to write into an AI client's MCP entry
// so that the server it spawns (with a bare environment) reaches the engine
// that was chosen here: the chosen endpoint when it is a local socket or
// pipe other than the platform default, and "" when the default is in use
// or nothing answered. The config's docker.host is not pinned: every
// server reads the same config file, and a pinned copy would outlive a
// change there. Remote endpoints (tcp, ssh) need more than a host
// (certificates, keys) and are left to the server's own detection, which
// reads the same contexts.
func (r *Result) PinnedHost() string {
	c := r.Chosen
	if c == nil {
		return ""
	}
	switch {
	case c.Source == "default socket" || c.Source == "default pipe" || c.Source == "docker.host":
		return ""
	case strings.HasPrefix(c.Host, "unix://"), strings.HasPrefix(c.Host, "npipe://"):
		return c.Host
	}
	return ""
}
