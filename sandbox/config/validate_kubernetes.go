package config

import (
	"regexp"
	"strings"
)

// maxWarmPool bounds a language's kubernetes.warm_pool: each pre-warmed
// sandbox is a running pod with the full limits.
const maxWarmPool = 16

// dnsLabel is a Kubernetes namespace name (RFC 1123 label); dnsSubdomain a
// RuntimeClass name (RFC 1123 subdomain).
var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)
)

// validateKubernetes checks [kubernetes]. Its values are checked whatever
// backend.kind says, so that switching to Kubernetes finds no surprise.
func (c *Config) validateKubernetes() error {
	k := c.Kubernetes
	if hasControl(k.Kubeconfig) {
		return invalid("kubernetes.kubeconfig", "holds a control character")
	}
	if hasControl(k.Context) || len(k.Context) > 253 {
		return invalid("kubernetes.context", "must be a context name of the kubeconfig, at most 253 characters, no control characters")
	}
	if k.Namespace != "" && !dnsLabel.MatchString(k.Namespace) {
		return invalid("kubernetes.namespace", "%q is not a namespace name: lower-case letters, digits and -, at most 63, starting and ending with a letter or digit", k.Namespace)
	}
	if k.RuntimeClass != "" && !dnsSubdomain.MatchString(k.RuntimeClass) {
		return invalid("kubernetes.runtime_class", "%q is not a RuntimeClass name: lower-case letters, digits, - and ., at most 253", k.RuntimeClass)
	}
	switch k.UseAgentSandbox {
	case "auto", "always", "never":
	default:
		return invalid("kubernetes.use_agent_sandbox", "%q is not one of auto, always, never", k.UseAgentSandbox)
	}
	if k.LeaseSeconds != 0 && (k.LeaseSeconds < 15 || k.LeaseSeconds > 3600) {
		return invalid("kubernetes.lease_seconds", "%d: must be between 15 and 3600 (0: 180)", k.LeaseSeconds)
	}
	for lang, n := range k.WarmPool {
		if _, ok := c.Language(lang); !ok || lang != strings.ToLower(strings.TrimSpace(lang)) {
			return invalid("kubernetes.warm_pool", "unknown language %q", lang)
		}
		if n < 0 || n > maxWarmPool {
			return invalid("kubernetes.warm_pool", "%s: the size must be between 0 and %d", lang, maxWarmPool)
		}
	}
	return nil
}

// hasControl reports whether s holds a control character.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
