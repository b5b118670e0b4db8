package netproxy

import (
	"context"
	"fmt"
)

// Risk is the warning a person reads beside an entry that reaches their
// own machine or network, or more than one host: an IP address (loopback,
// private, link-local, metadata, or any literal) or a wildcard. It is ""
// for an ordinary name. Such entries are allowed for one sandbox at most,
// never written into the config by an "Always" answer.
func Risk(e Entry) string {
	switch {
	case e.Wildcard:
		return fmt.Sprintf("a wildcard: every host under %s, whatever it is", e.Name)
	case !e.Addr.IsValid():
		return ""
	}
	if why := Restricted(e.Addr); why != "" {
		return fmt.Sprintf("%s: it reaches your own machine or network", why)
	}
	return "an IP address: it bypasses the names the allow list checks"
}

// Ungrantable says why a yes could not open e (a name whose every address
// is restricted: only an entry naming that address and port exactly
// allows it), or "" when a yes would. Wildcards and addresses are
// judged by Risk instead; a name that does not resolve is not refused
// here (the proxy says so when it is used).
func Ungrantable(ctx context.Context, r Resolver, e Entry) string {
	if e.Wildcard || e.Addr.IsValid() || e.Name == "" {
		return ""
	}
	if r == nil {
		return ""
	}
	addrs, err := r.LookupNetIP(ctx, "ip", e.Name)
	if err != nil || len(addrs) == 0 {
		return ""
	}
	why := ""
	for _, a := range addrs {
		r := Restricted(a.Unmap())
		if r == "" {
			return ""
		}
		if why == "" {
			why = fmt.Sprintf("%s resolves to %s, %s, which only an entry naming that address and its port allows", e.Name, a.Unmap(), r)
		}
	}
	return why
}
