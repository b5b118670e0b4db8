package dockerhost

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// errContext classifies a docker context that cannot be used.
var errContext = errors.New("docker context")

// explicit returns the endpoint the user chose: the config file's
// docker.host, then, in the docker CLI's order, DOCKER_HOST, DOCKER_CONTEXT
// and the current context in the docker config file. It returns nil when
// none is set, or the context is "default". A choice that cannot be read is
// returned with its Error set.
func (s settings) explicit() *Candidate {
	if s.configHost != "" {
		c := s.fromHost(s.configHost, "docker.host", "docker.host is set in "+s.configFile)
		c.choice = fmt.Sprintf("docker.host = %q (in %s)", s.configHost, s.configFile)
		c.undo = "clear docker.host in " + s.configFile + " to let MCP Sandbox detect one"
		return c
	}
	if h := s.getenv("DOCKER_HOST"); h != "" {
		c := s.fromHost(h, "DOCKER_HOST", "DOCKER_HOST is set")
		c.choice = "DOCKER_HOST=" + h + " (from the environment)"
		c.undo = "unset DOCKER_HOST to let MCP Sandbox detect one"
		return c
	}
	return s.fromContext()
}

// configDir is the docker CLI's configuration directory.
func (s settings) configDir() string {
	if d := s.getenv("DOCKER_CONFIG"); d != "" {
		return d
	}
	if s.home == "" {
		return ""
	}
	return filepath.Join(s.home, ".docker")
}

// fromHost reads a host set by DOCKER_HOST (or docker.host) and the TLS
// settings of the environment. As in the docker CLI, TLS is on when
// DOCKER_TLS or DOCKER_TLS_VERIFY is set; the material comes from
// DOCKER_CERT_PATH, or the config directory when that is unset; without
// DOCKER_TLS_VERIFY the server is not verified.
func (s settings) fromHost(h, source, why string) *Candidate {
	c := &Candidate{Host: h, Source: source, Explicit: true, why: why}
	verify := s.getenv("DOCKER_TLS_VERIFY") != ""
	withTLS := verify || s.getenv("DOCKER_TLS") != ""
	host, err := normalizeHost(h, withTLS, s)
	if err != nil {
		c.Error, c.invalid = err.Error(), true
		return c
	}
	c.Host = host
	if withTLS && strings.HasPrefix(host, "tcp://") {
		dir := s.getenv("DOCKER_CERT_PATH")
		if dir == "" {
			dir = s.configDir()
		}
		c.TLS = tlsFilesIn(dir)
		if c.TLS == nil {
			c.TLS = &TLSFiles{}
		}
		c.TLS.SkipVerify = !verify
	}
	return c
}

// fromContext reads the context named by DOCKER_CONTEXT or, failing that,
// the current context in config.json.
func (s settings) fromContext() *Candidate {
	name, why := s.getenv("DOCKER_CONTEXT"), "DOCKER_CONTEXT names it"
	undo := "unset DOCKER_CONTEXT to let MCP Sandbox detect one"
	if name == "" {
		cfg := filepath.Join(s.configDir(), "config.json")
		var err error
		name, err = currentContext(cfg)
		if err != nil {
			return &Candidate{Source: "docker config", Explicit: true, why: "the docker config file exists", Error: err.Error(),
				choice: "the docker config file " + cfg, invalid: true}
		}
		why = "it is the current context in " + cfg
		undo = "switch with `docker context use default` to let MCP Sandbox detect one"
	}
	if name == "" || name == "default" {
		return nil
	}
	c := &Candidate{Source: "context " + name, Explicit: true, why: why, undo: undo}
	c.choice = fmt.Sprintf("the docker context %q (%s)", name, why)
	ep, err := s.readContext(name)
	if err != nil {
		c.Error, c.invalid = err.Error(), true
		return c
	}
	host := ep.Host
	if host == "" {
		host = s.defaultHost()
	}
	if c.Host, err = normalizeHost(host, false, s); err != nil {
		c.Host = host
		c.Error, c.invalid = fmt.Sprintf("%v: %v", errContext, err), true
		return c
	}
	c.choice = fmt.Sprintf("the docker context %q at %s (%s)", name, c.Host, why)
	if strings.HasPrefix(c.Host, "tcp://") {
		c.TLS = tlsFilesIn(filepath.Join(s.configDir(), "contexts", "tls", contextDir(name), "docker"))
		if c.TLS == nil && ep.SkipTLSVerify {
			c.TLS = &TLSFiles{}
		}
		if c.TLS != nil {
			c.TLS.SkipVerify = ep.SkipTLSVerify
		}
	}
	return c
}

// currentContext returns currentContext from the docker config file at
// path; a missing file means none.
func currentContext(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read docker config: %w", err)
	}
	var cfg struct {
		CurrentContext string `json:"currentContext"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return "", fmt.Errorf("read docker config %s: %w", path, err)
	}
	return cfg.CurrentContext, nil
}

// contextEndpoint is the docker endpoint of a context's meta.json.
type contextEndpoint struct {
	Host          string `json:"Host"`
	SkipTLSVerify bool   `json:"SkipTLSVerify"`
}

// readContext reads the docker endpoint of the named context from
// contexts/meta/<sha256 of name>/meta.json, where the docker CLI keeps it.
func (s settings) readContext(name string) (contextEndpoint, error) {
	p := filepath.Join(s.configDir(), "contexts", "meta", contextDir(name), "meta.json")
	b, err := os.ReadFile(p)
	if errNotExist(err) {
		return contextEndpoint{}, fmt.Errorf("%w %q not found (no %s)", errContext, name, p)
	}
	if err != nil {
		return contextEndpoint{}, fmt.Errorf("read %v %q: %w", errContext, name, err)
	}
	var meta struct {
		Name      string                     `json:"Name"`
		Endpoints map[string]contextEndpoint `json:"Endpoints"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return contextEndpoint{}, fmt.Errorf("read %v %q: %s: %w", errContext, name, p, err)
	}
	ep, ok := meta.Endpoints["docker"]
	if !ok {
		return contextEndpoint{}, fmt.Errorf("%w %q has no docker endpoint", errContext, name)
	}
	return ep, nil
}

// contextDir is the directory name the docker CLI gives a context: the hex
// SHA-256 of its name.
func contextDir(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}
