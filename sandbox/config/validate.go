package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// Limits a config file may not go beyond, whatever it says: they keep one
// sandbox from taking the machine.
// MaxImageBytes is the largest limits.image_bytes: the server holds up to
// four calls' figures at once, and encodes each (base64, JSON) to send it.
const MaxImageBytes = 64 << 20

const (
	minMemoryMB = 16
	maxMemoryMB = 1 << 20
	maxPids     = 1 << 16
	// maxConnections bounds network.max_connections: each open proxy
	// connection holds buffers and a host socket.
	maxConnections = 4096
)

func invalid(key, format string, args ...any) *Error {
	return &Error{Key: key, Msg: fmt.Sprintf(format, args...)}
}

var languageName = regexp.MustCompile(`^[a-z][a-z0-9_+-]{0,31}$`)

func (c *Config) validate() error {
	for _, check := range []func() error{c.validateEngine, c.validateKubernetes, c.validateLanguages, c.validateLimits, c.validateNetwork, c.validateRest} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateEngine checks the backend, the runtime and the images.
func (c *Config) validateEngine() error {
	switch c.Backend.Kind {
	case "", "docker", BackendKubernetes:
	default:
		return invalid("backend.kind", "%q is not one of \"\", docker, kubernetes", c.Backend.Kind)
	}
	switch c.Docker.Runtime {
	case "", "runc", "runsc", "auto":
	default:
		return invalid("docker.runtime", "%q is not one of \"\", runc, runsc, auto", c.Docker.Runtime)
	}
	switch c.Images.Pull {
	case "never", "missing", "always":
	default:
		return invalid("images.pull", "%q is not one of never, missing, always", c.Images.Pull)
	}
	for key, img := range map[string]string{"images.python": c.Images.Python, "images.javascript": c.Images.JavaScript, "images.bash": c.Images.Bash} {
		if err := checkImageRef(img); err != nil {
			return invalid(key, "%v", err)
		}
	}
	return nil
}

// validateLanguages checks each [languages] table.
func (c *Config) validateLanguages() error {
	for name, l := range c.Languages {
		k := "languages." + name
		if !languageName.MatchString(name) {
			return invalid(k, "language names are lower-case letters, digits, _ + -")
		}
		if _, isBuiltin := builtin[name]; !isBuiltin {
			if l.Image == "" {
				return invalid(k+".image", "a language needs an image")
			}
			if len(l.Run) == 0 {
				return invalid(k+".run", `a language needs a run command, e.g. ["ruby", "{file}"]`)
			}
			if !strings.HasPrefix(l.Extension, ".") {
				return invalid(k+".extension", "the extension starts with a dot, e.g. \".rb\"")
			}
		}
		if l.Image != "" {
			if err := checkImageRef(l.Image); err != nil {
				return invalid(k+".image", "%v", err)
			}
		}
		switch l.Runner {
		case "", "python", "node", "shell", "none":
		default:
			return invalid(k+".runner", "%q is not one of python, node, shell, none", l.Runner)
		}
	}
	return nil
}

// validateLimits checks [limits].
func (c *Config) validateLimits() error {
	lim := c.Limits
	switch {
	case lim.MemoryMB < minMemoryMB || lim.MemoryMB > maxMemoryMB:
		return invalid("limits.memory_mb", "must be between %d and %d", minMemoryMB, maxMemoryMB)
	case lim.CPUs <= 0 || lim.CPUs > 1024:
		return invalid("limits.cpus", "must be more than 0 and at most 1024")
	case lim.Pids < 8 || lim.Pids > maxPids:
		return invalid("limits.pids", "must be between 8 and %d", maxPids)
	case lim.WorkspaceMB < 1 || lim.WorkspaceMB > maxMemoryMB:
		return invalid("limits.workspace_mb", "must be between 1 and %d", maxMemoryMB)
	case lim.ExecTimeoutSeconds < 1:
		return invalid("limits.exec_timeout_seconds", "must be at least 1")
	case lim.MaxExecTimeoutSeconds < lim.ExecTimeoutSeconds:
		return invalid("limits.max_exec_timeout_seconds", "must be at least exec_timeout_seconds (%d)", lim.ExecTimeoutSeconds)
	case lim.OutputBytes < 1024 || lim.OutputBytes > 64<<20:
		return invalid("limits.output_bytes", "must be between 1024 and %d", 64<<20)
	case lim.OutputFileBytes != 0 && (lim.OutputFileBytes < lim.OutputBytes || lim.OutputFileBytes > 1<<30):
		return invalid("limits.output_file_bytes", "must be 0 (keep no output file) or between output_bytes (%d) and %d", lim.OutputBytes, 1<<30)
	case lim.ImageBytes < 0 || lim.ImageBytes > MaxImageBytes:
		return invalid("limits.image_bytes", "must be between 0 and %d", MaxImageBytes)
	case lim.IdleTTLMinutes < 1:
		return invalid("limits.idle_ttl_minutes", "must be at least 1")
	case lim.MaxSandboxes < 1 || lim.MaxSandboxes > 1000:
		return invalid("limits.max_sandboxes", "must be between 1 and 1000")
	}
	return nil
}

// validateNetwork checks [network].
func (c *Config) validateNetwork() error {
	switch c.Network.Default {
	case "none", "allowlist", "egress":
	default:
		return invalid("network.default", "%q is not one of none, allowlist, egress", c.Network.Default)
	}
	if _, err := netproxy.ParseEntries(c.Network.AllowDomains); err != nil {
		return invalid("network.allow_domains", "%v", err)
	}
	if c.Network.MaxConnections < 1 || c.Network.MaxConnections > maxConnections {
		return invalid("network.max_connections", "must be between 1 and %d", maxConnections)
	}
	if c.Network.Default == "egress" && !c.Network.AllowEgress {
		return invalid("network.default", "egress as the default needs network.allow_egress = true")
	}
	return nil
}

// validateRest checks [files], [pool] and [tray].
func (c *Config) validateRest() error {
	if c.Files.MaxCopyMB < 1 {
		return invalid("files.max_copy_mb", "must be at least 1")
	}
	if strings.TrimSpace(c.Files.WriteRoot) == "" {
		return invalid("files.write_root", "must name a directory")
	}
	for _, r := range c.Files.ApplyRoots {
		if err := validRoot(r); err != "" {
			return invalid("files.apply_roots", "%q %s", r, err)
		}
	}
	if c.Pool.Size < 0 || c.Pool.Size > 16 {
		return invalid("pool.size", "must be between 0 and 16")
	}
	if c.Pool.MaxSize < 0 || c.Pool.MaxSize > 16 {
		return invalid("pool.max_size", "must be between 0 and 16")
	}
	if c.Pool.IdleSeconds < 1 || c.Pool.IdleSeconds > 86400 {
		return invalid("pool.idle_seconds", "must be between 1 and 86400")
	}
	for _, l := range c.Pool.Languages {
		if _, ok := c.Language(l); !ok {
			return invalid("pool.languages", "unknown language %q", l)
		}
	}
	if c.Tray.HTTPPort < 0 || c.Tray.HTTPPort > 65535 {
		return invalid("tray.http_port", "must be a TCP port or 0")
	}
	for _, o := range c.HTTP.AllowedOrigins {
		if CanonicalOrigin(o) == "" {
			return invalid("http.allowed_origins", "%q is not an origin: write scheme://host[:port], e.g. \"http://127.0.0.1:6274\", with no path", o)
		}
	}
	return nil
}

// CanonicalOrigin is origin as browsers send it (scheme and host in lower
// case, no default port), or "" when it is not an http(s) origin with
// nothing after the host and port.
func CanonicalOrigin(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") {
		return ""
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host
}

// imageRef is deliberately strict: a reference is passed to the engine, and
// nothing that looks like a flag or holds spaces or control characters is.
var imageRef = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:@+-]*$`)

// checkImageRef reports whether s is a plausible image reference.
func checkImageRef(s string) error {
	if s == "" {
		return fmt.Errorf("an image is required")
	}
	if len(s) > 255 || !imageRef.MatchString(strings.ToLower(s)) {
		return fmt.Errorf("%q is not a valid image reference", s)
	}
	return nil
}

// CheckImageRef validates an image reference given by a tool call.
func CheckImageRef(s string) error { return checkImageRef(s) }

// validRoot says what is wrong with a root directory's name: "" if
// nothing.
func validRoot(r string) string {
	switch {
	case strings.TrimSpace(r) == "":
		return "is empty: name a directory"
	case strings.ContainsFunc(r, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		return "holds a control character"
	case r != "~" && !strings.HasPrefix(r, "~/") && !strings.HasPrefix(r, `~\`) && !filepath.IsAbs(r):
		return "is relative: write an absolute path or one starting with ~/"
	}
	return ""
}
