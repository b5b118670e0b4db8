package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netglue"
)

// InstallRequest asks for packages in a sandbox.
type InstallRequest struct {
	Packages []string
	Manager  string // pip | npm | auto
	// Waiting is RunRequest's: it hears what a call that must wait for
	// the previous install waits for.
	Waiting func(msg string)
}

// InstallResult is how an install went.
type InstallResult struct {
	ExitCode  int      `json:"exit_code"`
	Stdout    string   `json:"stdout"`
	Stderr    string   `json:"stderr"`
	Installed []string `json:"installed"`
	Manager   string   `json:"manager"`
	Note      string   `json:"note"`
	TimedOut  bool     `json:"timed_out"`
	// Reached are the host:port the helper's proxy let it reach.
	Reached []string `json:"reached"`
}

// Package name rules: a name (with pip extras) and an optional version
// constraint, never an option, a URL or a path, so nothing such as
// --extra-index-url=http://evil can be smuggled in as a package.
var (
	pipPackage = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*\])?((===|==|!=|~=|<=|>=|<|>)[A-Za-z0-9.*+!_-]+(,(===|==|!=|~=|<=|>=|<|>)[A-Za-z0-9.*+!_-]+)*)?$`)
	npmPackage = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*(@[A-Za-z0-9.^~<>=*+_-]+)?$`)
)

const maxPackages = 50

// CheckPackages validates package names for a manager.
func CheckPackages(manager string, pkgs []string) error {
	if len(pkgs) == 0 {
		return invalidErr("packages is empty; name at least one package, e.g. [\"requests\"]")
	}
	if len(pkgs) > maxPackages {
		return invalidErr("%d packages in one call; at most %d", len(pkgs), maxPackages)
	}
	re := pipPackage
	if manager == "npm" {
		re = npmPackage
	}
	for _, p := range pkgs {
		if len(p) > 200 || !re.MatchString(p) || looksLikeArchive(p) {
			return invalidErr("%s is not a valid %s package name (a name with an optional version such as numpy==1.26 or lodash@4; no options, URLs or paths)", strconv.Quote(p), manager)
		}
	}
	return nil
}

// installCache is where helpers find the sandbox's download cache.
const installCache = "/cache"

// helperUser is the user install helpers run as: never the sandbox's own,
// so that the install cache they share is out of the sandbox's reach.
func helperUser(sandboxUser string) string {
	if uid, _ := userIDs(sandboxUser); uid == 65533 {
		return "65532:65532"
	}
	return "65533:65533"
}

// archiveSuffix matches the file names pip and npm read as a local archive
// to install rather than as a package name.
var archiveSuffix = regexp.MustCompile(`(?i)\.(whl|zip|tgz|tbz|txz|tlz|tar|tar\.(gz|bz2|xz|lz|lzma))$`)

func looksLikeArchive(spec string) bool { return archiveSuffix.MatchString(spec) }

// InstallPackages installs packages for a sandbox. The sandbox itself never
// gets a network interface: a short-lived helper container from the same
// image, with network, installs every package asked for so far into a
// fresh workspace of its own (pip --user into /workspace/.local, npm into
// /workspace/node_modules), and what it installed is then copied into the
// same place in the sandbox's workspace, which the sandbox's interpreters
// already look in. The helper never sees the sandbox's files, so nothing
// the sandbox's code wrote (a .pth file, a pip.conf, an .npmrc, a
// package.json with scripts) can run or steer it while it has the network.
func (e *Engine) InstallPackages(ctx context.Context, id string, req InstallRequest, out OutputFunc) (res InstallResult, err error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return InstallResult{}, err
	}
	cfg := e.cfg.Current()
	if !cfg.Network.Install {
		return InstallResult{}, fmt.Errorf("%w: package installs are turned off; set network.install = true in %s to allow them (%s)", ErrPolicy, cfg.File(), appliesSoon)
	}
	manager, err := installManager(sb, req.Manager)
	if err != nil {
		return InstallResult{}, err
	}
	if err := CheckPackages(manager, req.Packages); err != nil {
		return InstallResult{}, err
	}
	// Every package asked for so far is installed again, in the helper's
	// fresh workspace, so that the result is one coherent set.
	if err := sb.installLock.acquire(ctx, holderInstaller, req.Waiting); err != nil {
		return InstallResult{}, fmt.Errorf("cancelled while waiting for the previous install: %w", err)
	}
	defer sb.installLock.release()
	specs := mergeSpecs(manager, sb.installs.specs[manager], req.Packages)
	cmd := append(append([]string{}, installCommand[manager]...), specs...)

	e.begin(sb)
	defer e.end(sb)
	stdout := newCapture(cfg.Limits.OutputBytes, streamTo(out, "stdout"))
	stderr := newCapture(cfg.Limits.OutputBytes, streamTo(out, "stderr"))
	tctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.Limits.MaxExecTimeoutSeconds)*time.Second)
	defer cancel()
	var reached netglue.Reached
	status, err := e.runInstallHelper(tctx, sb, manager, specs, backend.HelperSpec{
		Image: sb.Image, Cmd: cmd, Env: append(installEnv(cfg.Network.InstallEnv), netglue.HelperProxyEnv()...), User: helperUser(sb.User),
		Network: NetworkNone, Runtime: e.runtimeFor(ctx, cfg), Stdout: stdout, Stderr: stderr,
		Started: e.helperProxy(sb, netglue.InstallEntries(cfg.Network.InstallEnv), proxyMaxConns(cfg.Network.MaxConnections), &reached),
	})
	res = InstallResult{Manager: manager, ExitCode: status.ExitCode, Installed: []string{}}
	defer func() { res.Reached = reached.List() }()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return res, fmt.Errorf("cancelled: %w", ctx.Err())
	case tctx.Err() != nil:
		res.TimedOut, res.ExitCode = true, exitTimedOut
	case errors.Is(err, ErrPolicy):
		return res, err
	default:
		return res, e.containerGone(ctx, sb, err)
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	if res.ExitCode == 0 {
		res.Installed = append(res.Installed, req.Packages...)
		res.Note = installedNote
	} else if res.TimedOut {
		res.Note = fmt.Sprintf("Nothing was installed: the install ran out of time (%d s, limits.max_exec_timeout_seconds in %s).", cfg.Limits.MaxExecTimeoutSeconds, cfg.File())
	} else {
		res.Note = installFailureNote(manager, res.Stdout+res.Stderr, cfg.File())
	}
	sb.transcript.add("install_packages ("+manager+")", strings.Join(req.Packages, " "), &ExecResult{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr}, "")
	return res, nil
}

// installManager is the package manager an install in sb uses: the one
// asked for, or for "" and "auto" the one of sb's language.
func installManager(sb *Sandbox, asked string) (string, error) {
	manager := asked
	if manager == "" || manager == "auto" {
		switch sb.Lang.Runner {
		case "node":
			manager = "npm"
		case "python":
			manager = "pip"
		default:
			return "", invalidErr("cannot tell the package manager for a %s sandbox; pass manager: pip or npm", sb.Language)
		}
	}
	if _, ok := installCommand[manager]; !ok {
		return "", invalidErr("manager must be pip, npm or auto, not %q", manager)
	}
	return manager, nil
}

// installCommand is each package manager's command, before the packages.
var installCommand = map[string][]string{
	"pip": {"python3", "-m", "pip", "install", "--user", "--no-input", "--no-warn-script-location", "--progress-bar", "off", "--"},
	"npm": {"npm", "install", "--no-audit", "--no-fund", "--loglevel", "error", "--prefix", backend.Workspace, "--"},
}

// installEnv is an install helper's environment: the sandbox's base one
// with downloads cached in a volume only this sandbox's helpers can use
// (so a later install does not fetch the earlier packages again), and
// network.install_env's variables, in name order.
func installEnv(extra map[string]string) []string {
	env := make([]string, 0, len(baseEnv)+4+len(extra))
	for _, kv := range baseEnv {
		if !strings.HasPrefix(kv, "PIP_NO_CACHE_DIR=") && !strings.HasPrefix(kv, "npm_config_cache=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PIP_BREAK_SYSTEM_PACKAGES=1", "PIP_ROOT_USER_ACTION=ignore",
		"PIP_CACHE_DIR="+installCache+"/pip", "npm_config_cache="+installCache+"/npm")
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// runInstallHelper runs spec (its image, command, environment, user,
// network and output set) as sb's install helper: within sb's limits,
// labelled as this server's, and placing what it installed into sb's
// workspace, where it records the units placed and, when all went in,
// specs as what sb has installed with manager.
func (e *Engine) runInstallHelper(ctx context.Context, sb *Sandbox, manager string, specs []string, spec backend.HelperSpec) (backend.ExecStatus, error) {
	spec.MemoryBytes = max(int64(sb.Limits.MemoryMB)<<20, 512<<20)
	spec.NanoCPUs = int64(sb.Limits.CPUs * 1e9)
	spec.Pids = int64(max(sb.Limits.Pids, 256))
	spec.Labels = map[string]string{
		backend.LabelManaged: "true", backend.LabelHelper: sb.ID, backend.LabelID: sb.ID + "-install",
		backend.LabelOwner: e.owner, backend.LabelInstallation: e.installation, backend.LabelOwnerPID: strconv.Itoa(e.pid), backend.LabelOwnerHost: e.hostname,
	}
	spec.WorkspaceMB = sb.Limits.WorkspaceMB
	spec.CacheDir = installCache
	spec.Collect = collectDir[manager]
	spec.Into = func(r io.Reader) error {
		units, err := e.placePackages(ctx, sb, collectDir[manager], sb.installs.units[manager], r)
		// Whatever was placed is what the next install replaces.
		if sb.installs.units == nil {
			sb.installs.units = map[string][]string{}
		}
		sb.installs.units[manager] = units
		if err == nil {
			if sb.installs.specs == nil {
				sb.installs.specs = map[string][]string{}
			}
			sb.installs.specs[manager] = specs
		}
		return err
	}
	return e.be.RunHelper(ctx, sb.ContainerID, spec)
}

// installedNote is a successful install's note.
const installedNote = "Installed by a short-lived helper container (the sandbox's runtime, a fresh workspace of its own, no network but a proxy to the package indexes), then copied into /workspace; the sandbox itself still has no network."

// Markers in a failed install's output, by cause. The order matters: pip
// ends an install that could not reach its index with "No matching
// distribution found", the very words of a name the index does not have,
// so a connection error is looked for first.
var (
	installNetworkMarks = []string{
		// pip (urllib3, the resolver, a proxy)
		"Name or service not known", "Temporary failure in name resolution", "Failed to establish a new connection",
		"Network is unreachable", "No route to host", "Connection refused", "ProxyError", "Cannot connect to proxy",
		"Tunnel connection failed", "ConnectTimeoutError", "Read timed out",
		"is not a trusted or secure host", // an http:// index without PIP_TRUSTED_HOST is skipped
		// npm (Node's errno codes; the helper's proxy answering for an
		// index it could not reach or may not)
		"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH", "EHOSTUNREACH",
		"E502", "E503", "E504", "502 Bad Gateway", "503 Service Unavailable", "504 Gateway Timeout",
	}
	installMissingMarks = []string{"No matching distribution found", "Could not find a version that satisfies", "E404", "ETARGET", "404 Not Found", "is not in this registry"}
	installBuildMarks   = []string{"Failed building wheel", "Failed to build", "Could not build wheels", "subprocess-exited-with-error", "gyp ERR!", "ELIFECYCLE", "command failed"}
)

// installFailureNote says, from a failed install's output, what went wrong
// and what to do next; cfgFile is the config file in force.
func installFailureNote(manager, output, cfgFile string) string {
	if mark := firstMark(output, installNetworkMarks); mark != "" {
		why := "the name was not checked"
		if strings.Contains(output, "403") {
			// The helper's proxy refused the host, not the network.
			why = "the install helper reaches only pypi.org, files.pythonhosted.org, registry.npmjs.org and the hosts of network.install_env's index URLs"
		}
		index, wheel := "PIP_INDEX_URL", "a wheel and run `pip install --user --no-index FILE.whl`"
		if manager == "npm" {
			index, wheel = "npm_config_registry", "a package .tgz and run `npm install FILE.tgz`"
		}
		return fmt.Sprintf("Nothing was installed: the package index could not be reached (%s); %s. "+
			"Set a reachable index (%s) in network.install_env of %s (%s), or copy_in %s with sandbox_exec.",
			mark, why, index, cfgFile, appliesSoon, wheel)
	}
	switch {
	case firstMark(output, installMissingMarks) != "":
		return "Nothing was installed: the package index has no such package or version; check the name and version."
	case firstMark(output, installBuildMarks) != "":
		return "Nothing was installed: a package failed to build (stderr says why; often a compiler or library missing from the image); try a version with a prebuilt wheel."
	}
	return "Nothing was installed; stderr says why."
}

// firstMark returns the first of marks found in s, or "".
func firstMark(s string, marks []string) string {
	for _, m := range marks {
		if strings.Contains(s, m) {
			return m
		}
	}
	return ""
}
