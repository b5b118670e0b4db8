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
	// cpuQuantity is a CPU quantity in millicores ("250m") or cores
	// ("0.25", "2"): the forms of Kubernetes quantities a person writes
	// for a CPU (no exponents or other suffixes).
	cpuQuantity = regexp.MustCompile(`^(([0-9]{1,6})m|([0-9]{1,4})(\.[0-9]{1,3})?)$`)
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
	if k.CPURequest != "" && !positiveCPU(k.CPURequest) {
		return invalid("kubernetes.cpu_request", "%q is not a CPU quantity: write millicores (\"50m\") or cores (\"0.25\"), more than 0; empty: a tenth of each sandbox's CPU limit", k.CPURequest)
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

// positiveCPU reports whether s is a CPU quantity (cpuQuantity) of at
// least a millicore.
func positiveCPU(s string) bool {
	if !cpuQuantity.MatchString(s) {
		return false
	}
	return strings.Trim(strings.TrimSuffix(s, "m"), "0.") != ""
}

// hasControl reports whether s holds a control character.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
