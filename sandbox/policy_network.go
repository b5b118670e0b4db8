package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netglue"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// Network modes a sandbox may have.
const (
	NetworkNone      = "none"
	NetworkAllowlist = "allowlist"
	NetworkEgress    = "egress"
)

// ErrAllowlistUnavailable: allowlist networking was asked for (by
// sandbox_create or network.default) for a sandbox whose command agent
// cannot run (the proxy rides its connection). It wraps ErrPolicy. The mode never falls back to no network or to
// a real one: an explicit choice is carried out or fails.
var ErrAllowlistUnavailable = fmt.Errorf("%w: allowlist networking is not available", ErrPolicy)

// planNetwork checks the network a request asks for (or the config's
// default) and its allow_domains against the policy.
func planNetwork(cfg *config.Config, req CreateRequest) (string, error) {
	mode := req.Network
	if mode == "" {
		mode = cfg.Network.Default
	}
	if len(req.AllowDomains) > 0 && mode != NetworkAllowlist {
		return "", invalidErr("allow_domains is only for network \"allowlist\" (this sandbox's network is %q)", mode)
	}
	switch mode {
	case NetworkNone:
		return mode, nil
	case NetworkEgress:
		if !cfg.Network.AllowEgress {
			return "", policyErr("network egress is not allowed; set network.allow_egress = true in %s to allow it (%s)", cfg.File(), appliesSoon)
		}
		return mode, nil
	case NetworkAllowlist:
		if err := checkAllowDomains(cfg, req.AllowDomains, req.personAllowed); err != nil {
			return "", err
		}
		return mode, nil
	}
	return "", invalidErr("network must be \"none\", \"allowlist\" or \"egress\", not %q", mode)
}

// notCoveredError: allow_domains names entries the config does not
// allow. Create may ask a person about Missing (Options.AskEntries).
type notCoveredError struct {
	Missing []string
	err     error
}

func (e *notCoveredError) Error() string { return e.err.Error() }
func (e *notCoveredError) Unwrap() error { return e.err }

// checkAllowDomains refuses entries that cannot be read, and entries the
// config does not already allow unless a person allowed them: a tool
// argument alone never opens a host.
func checkAllowDomains(cfg *config.Config, asked []string, personAllowed bool) error {
	entries, err := netproxy.ParseEntries(asked)
	if err != nil {
		return invalidErr("allow_domains: %v", strings.TrimPrefix(err.Error(), netproxy.ErrEntry.Error()+" "))
	}
	if personAllowed {
		return nil
	}
	allowed, err := netproxy.ParseEntries(cfg.Network.AllowDomains)
	if err != nil {
		return invalidErr("network.allow_domains in %s: %v", cfg.File(), err)
	}
	if missing := netglue.Missing(allowed, entries); len(missing) > 0 {
		return &notCoveredError{Missing: missing, err: policyErr("allow_domains: %s %s not in network.allow_domains of %s; only a person can allow a host: add %s there (the AI asking for it is not enough; %s)",
			strings.Join(missing, ", "), isAre(len(missing)), cfg.File(), quoteList(missing), appliesSoon)}
	}
	return nil
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// planAsking is makePlan, but allow_domains the config does not cover are
// put to a person first (when network.ask is on and the engine has a way
// to ask): their yes is the only thing that lets them in.
func (e *Engine) planAsking(ctx context.Context, cfg *config.Config, req CreateRequest) (plan, error) {
	p, err := makePlan(cfg, req)
	var nc *notCoveredError
	if !errors.As(err, &nc) || !cfg.Network.Ask || e.askEntries == nil {
		return p, err
	}
	if why := netglue.NotAskable(ctx, e.resolver, nc.Missing); why != "" {
		return p, fmt.Errorf("%w (no person was asked: %s)", err, why)
	}
	// makePlan resolved the language (the default's, when none was named)
	// before it judged the network.
	d, askErr := e.askEntries(ctx, p.Language, nc.Missing)
	switch {
	case askErr != nil:
		return p, fmt.Errorf("%w (not allowed: %v)", err, askErr)
	case d == netproxy.Declined:
		return p, fmt.Errorf("%w (the person asked declined it)", err)
	case d != netproxy.Allow:
		return p, fmt.Errorf("%w (a person was asked and did not allow it, or nobody could be asked)", err)
	}
	req.personAllowed = true
	return makePlan(cfg, req)
}
