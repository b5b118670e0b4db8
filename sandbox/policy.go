package sandbox

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// CreateRequest is what a client asks for; zero values mean "the default".
type CreateRequest struct {
	Language string
	Image    string
	Network  string
	// AllowDomains are allow_domains entries asked for (network
	// "allowlist" only); each must already be allowed by the config, or
	// a person must allow them (Options.AskEntries).
	AllowDomains []string
	// personAllowed: a person allowed AllowDomains for this sandbox. It
	// is unexported, so no caller (and no tool argument) can set it.
	personAllowed bool
	MemoryMB      int
	CPUs          float64
	Pids          int
	TTLMinutes    int
	Env           map[string]string
	// Client is the MCP client's name, recorded in labels and the audit log.
	Client string
	// Progress receives image pull progress, if any.
	Progress func(backend.PullProgress)
	// oneShot: the sandbox of a run_code without sandbox_id, removed as
	// soon as its code ran; its agent is not started ahead.
	oneShot bool
}

// plan is a CreateRequest checked against the policy.
type plan struct {
	Language string
	Lang     config.Language
	Image    string
	Network  string
	// AllowDomains are the sandbox's own allow_domains (checked).
	AllowDomains []string
	Limits       inventory.Limits
	TTL          int // minutes
	Env          []string
}

// Bounds on what a tool call may pass, whatever the policy says.
const (
	maxTTLMinutes   = 24 * 60
	maxEnvVars      = 64
	maxEnvValue     = 32 << 10
	maxCommandBytes = 256 << 10
	maxStdinBytes   = 8 << 20
	maxCodeBytes    = 4 << 20
)

func policyErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrPolicy, fmt.Sprintf(format, args...))
}

func invalidErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// resolveLanguage returns the language's name and definition, or an error
// that lists the languages there are.
func resolveLanguage(cfg *config.Config, name string) (string, config.Language, error) {
	if name == "" {
		name = "python"
	}
	l, ok := cfg.Language(name)
	if !ok {
		return "", l, invalidErr("unknown language %q; available: %s (more can be added under [languages] in %s)",
			name, strings.Join(cfg.LanguageNames(), ", "), cfg.Source)
	}
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "js", "node":
		n = "javascript"
	case "sh", "shell":
		n = "bash"
	}
	return n, l, nil
}

// makePlan checks req against the policy in cfg.
func makePlan(cfg *config.Config, req CreateRequest) (plan, error) {
	var p plan
	if req.Language == "" && req.Image != "" {
		if l, ok := cfg.LanguageOfImage(req.Image); ok {
			req.Language = l
		}
	}
	name, lang, err := resolveLanguage(cfg, req.Language)
	if err != nil {
		return p, err
	}
	p.Language, p.Lang = name, lang
	p.Image = lang.Image
	if req.Image != "" {
		if err := config.CheckImageRef(req.Image); err != nil {
			return p, invalidErr("image: %v", err)
		}
		if !cfg.ImageAllowed(req.Image) {
			return p, policyErr("image %q is not allowed; allowed are the language images (%s) and the patterns in images.allowed of %s",
				req.Image, strings.Join(languageImages(cfg), ", "), cfg.Source)
		}
		p.Image = req.Image
	}

	if p.Network, err = planNetwork(cfg, req); err != nil {
		return p, err
	}
	p.AllowDomains = req.AllowDomains

	lim := cfg.Limits
	p.Limits = inventory.Limits{MemoryMB: lim.MemoryMB, CPUs: lim.CPUs, Pids: lim.Pids, WorkspaceMB: lim.WorkspaceMB, ExecTimeoutSeconds: lim.ExecTimeoutSeconds}
	if req.MemoryMB != 0 {
		if req.MemoryMB < 16 || req.MemoryMB > lim.MemoryMB {
			return p, policyErr("memory_mb %d is outside what the policy allows (16 to %d, limits.memory_mb in %s)", req.MemoryMB, lim.MemoryMB, cfg.Source)
		}
		p.Limits.MemoryMB = req.MemoryMB
	}
	if req.CPUs != 0 {
		if req.CPUs < 0.01 || req.CPUs > lim.CPUs {
			return p, policyErr("cpus %g is outside what the policy allows (0.01 to %g, limits.cpus in %s)", req.CPUs, lim.CPUs, cfg.Source)
		}
		p.Limits.CPUs = req.CPUs
	}
	if req.Pids != 0 {
		if req.Pids < 8 || req.Pids > lim.Pids {
			return p, policyErr("pids %d is outside what the policy allows (8 to %d, limits.pids in %s)", req.Pids, lim.Pids, cfg.Source)
		}
		p.Limits.Pids = req.Pids
	}
	p.TTL = lim.IdleTTLMinutes
	if req.TTLMinutes != 0 {
		if req.TTLMinutes < 1 || req.TTLMinutes > maxTTLMinutes {
			return p, policyErr("ttl_minutes %d is outside 1 to %d", req.TTLMinutes, maxTTLMinutes)
		}
		p.TTL = req.TTLMinutes
	}
	env, err := checkEnv(req.Env)
	if err != nil {
		return p, err
	}
	p.Env = env
	return p, nil
}

func languageImages(cfg *config.Config) []string {
	var out []string
	for _, n := range cfg.LanguageNames() {
		if l, ok := cfg.Language(n); ok {
			out = append(out, l.Image)
		}
	}
	return out
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// reservedEnv are variables the sandbox's own set-up depends on.
var reservedEnv = map[string]bool{"HOME": true, "PATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true}

// checkEnv validates environment variables from a tool call and returns them
// sorted as KEY=VALUE.
func checkEnv(env map[string]string) ([]string, error) {
	if len(env) > maxEnvVars {
		return nil, invalidErr("env has %d variables; at most %d", len(env), maxEnvVars)
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		if !envName.MatchString(k) {
			return nil, invalidErr("env: %q is not a valid variable name (letters, digits and _, not starting with a digit)", k)
		}
		if reservedEnv[k] {
			return nil, invalidErr("env: %s is set by the sandbox and cannot be changed", k)
		}
		if len(v) > maxEnvValue || strings.ContainsRune(v, 0) {
			return nil, invalidErr("env: the value of %s is too long or holds a NUL byte", k)
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// ResolvePath resolves p (relative to /workspace, or absolute) and refuses
// anything that leaves /workspace and /tmp after cleaning.
func ResolvePath(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", invalidErr("path holds a NUL byte")
	}
	if len(p) > 4096 {
		return "", invalidErr("path is longer than 4096 bytes")
	}
	if strings.ContainsAny(p, "\n\r") {
		return "", invalidErr("path %q holds a line break", p)
	}
	if p == "" {
		return backend.Workspace, nil
	}
	var clean string
	if strings.HasPrefix(p, "/") {
		clean = path.Clean(p)
	} else {
		clean = path.Join(backend.Workspace, p)
	}
	for _, root := range []string{backend.Workspace, "/tmp"} {
		if clean == root || strings.HasPrefix(clean, root+"/") {
			return clean, nil
		}
	}
	return "", fmt.Errorf("%w: path %q resolves to %s, outside %s and /tmp; use a path inside the workspace", ErrPolicy, p, clean, backend.Workspace)
}

// timeoutFor returns the exec timeout for a call that asked for seconds (0:
// the default).
func timeoutFor(cfg *config.Config, seconds int) (int, error) {
	if seconds == 0 {
		return cfg.Limits.ExecTimeoutSeconds, nil
	}
	if seconds < 1 || seconds > cfg.Limits.MaxExecTimeoutSeconds {
		return 0, policyErr("timeout_seconds %d is outside 1 to %d (limits.max_exec_timeout_seconds in %s)", seconds, cfg.Limits.MaxExecTimeoutSeconds, cfg.Source)
	}
	return seconds, nil
}

// sandboxUser picks the container user: the image's own when it names a
// non-root numeric uid, else uid 1000.
func sandboxUser(imageUser string) string {
	u := strings.TrimSpace(imageUser)
	name, group, _ := strings.Cut(u, ":")
	if uid, err := strconv.Atoi(name); err == nil && uid > 0 {
		if gid, err := strconv.Atoi(group); err == nil && gid > 0 {
			return fmt.Sprintf("%d:%d", uid, gid)
		}
		return fmt.Sprintf("%d:%d", uid, uid)
	}
	return "1000:1000"
}

// What an engine says when it refuses a sandbox's CPU or memory limit at
// create time: Docker and Podman check cpus against the host's cores and
// memory against their minimum. The sentence is quoted back, since it
// holds the engine's range.
var (
	cpusRefused   = regexp.MustCompile(`(?i)range of cpus is from [0-9.]+ to [0-9.]+[^:;"]*`)
	memoryRefused = regexp.MustCompile(`(?i)minimum memory limit (allowed )?(is|should be|can not be less than) [0-9.]+ ?[kmg]?i?b?`)
)

// limitRefused turns an engine's refusal of a sandbox's CPU or memory
// limit into an error naming the setting that chose it (the tool argument,
// else the config key and file) and the engine's range; other errors pass
// through. The engine's sentence is quoted whole; the rest of its error
// (the API call, "Error response from daemon") tells nothing more.
func limitRefused(cfg *config.Config, req CreateRequest, lim inventory.Limits, err error) error {
	if m := cpusRefused.FindString(err.Error()); m != "" {
		return fmt.Errorf("%w: cpus %g is more than this engine allows (%q): %s",
			ErrInvalid, lim.CPUs, m, setLimit(cfg, "cpus", req.CPUs != 0))
	}
	if m := memoryRefused.FindString(err.Error()); m != "" {
		return fmt.Errorf("%w: memory_mb %d is less than this engine allows (%q): %s",
			ErrInvalid, lim.MemoryMB, m, setLimit(cfg, "memory_mb", req.MemoryMB != 0))
	}
	return err
}

// setLimit says how to change the limit arg: the call's own argument when
// it passed one, else limits.<arg> in the config file.
func setLimit(cfg *config.Config, arg string, passed bool) string {
	fix := fmt.Sprintf("set limits.%s in %s within that range (%s)", arg, cfg.File(), appliesSoon)
	if passed {
		return fmt.Sprintf("pass %s within that range (its default is limits.%s in %s)", arg, arg, cfg.File())
	}
	return fix
}
