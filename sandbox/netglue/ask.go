package netglue

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// Missing returns the entries of asked that no entry of allowed covers, as
// the config writes them.
func Missing(allowed, asked []netproxy.Entry) []string {
	var missing []string
	for _, e := range asked {
		if !coveredBy(allowed, e) {
			missing = append(missing, e.String())
		}
	}
	return missing
}

func coveredBy(list []netproxy.Entry, e netproxy.Entry) bool {
	for _, a := range list {
		if a.Covers(e) {
			return true
		}
	}
	return false
}

// maxAskEntries bounds the entries one question may hold: a longer list
// hides what it asks.
const maxAskEntries = 10

// askResolveTimeout bounds the lookups before a question.
const askResolveTimeout = 3 * time.Second

// NotAskable says why missing is not put to a person, or "": more
// entries than a question may hold, or one a yes could not open (a name
// whose every address is restricted, which only an address entry allows).
// r looks the names up.
func NotAskable(ctx context.Context, r netproxy.Resolver, missing []string) string {
	if len(missing) > maxAskEntries {
		return fmt.Sprintf("%d entries are more than one question may hold (%d); a person adds them to network.allow_domains instead", len(missing), maxAskEntries)
	}
	ctx, cancel := context.WithTimeout(ctx, askResolveTimeout)
	defer cancel()
	for _, s := range missing {
		x, err := netproxy.ParseEntry(s)
		if err != nil {
			continue
		}
		if why := netproxy.Ungrantable(ctx, r, x); why != "" {
			return why + ", so a yes could not open it"
		}
	}
	return ""
}
