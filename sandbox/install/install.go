package install

import (
	"context"
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

// Request asks for packages in a sandbox.
type Request struct {
	Packages []string
	Manager  string // pip | npm | auto
	// Waiting is RunRequest's: it hears what a call that must wait for
	// the previous install waits for.
	Waiting func(msg string)
}

// Result is how an install went.
type Result struct {
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

// CheckPackages validates package names for a manager. Its errors, like
// Manager's, are the caller's invalid-request class.
func CheckPackages(manager string, pkgs []string) error {
	if len(pkgs) == 0 {
		return fmt.Errorf("packages is empty; name at least one package, e.g. [\"requests\"]")
	}
	if len(pkgs) > maxPackages {
		return fmt.Errorf("%d packages in one call; at most %d", len(pkgs), maxPackages)
	}
	re := pipPackage
	if manager == "npm" {
		re = npmPackage
	}
	for _, p := range pkgs {
		if len(p) > 200 || !re.MatchString(p) || looksLikeArchive(p) {
			return fmt.Errorf("%s is not a valid %s package name (a name with an optional version such as numpy==1.26 or lodash@4; no options, URLs or paths)", strconv.Quote(p), manager)
		}
	}
	return nil
}

// appliesSoon follows a message that asks for a change to the config
// file, as the engine's do.
const appliesSoon = "a saved change applies within a second, no restart"

// cacheDir is where helpers find the sandbox's download cache.
const cacheDir = "/cache"

// archiveSuffix matches the file names pip and npm read as a local archive
// to install rather than as a package name.
var archiveSuffix = regexp.MustCompile(`(?i)\.(whl|zip|tgz|tbz|txz|tlz|tar|tar\.(gz|bz2|xz|lz|lzma))$`)

func looksLikeArchive(spec string) bool { return archiveSuffix.MatchString(spec) }

// Manager is the package manager an install uses: the one asked for, or
// for "" and "auto" the one of the sandbox's runner (its language named
// in the error).
func Manager(asked, runner, language string) (string, error) {
	manager := asked
	if manager == "" || manager == "auto" {
		switch runner {
		case "node":
			manager = "npm"
		case "python":
			manager = "pip"
		default:
			return "", fmt.Errorf("cannot tell the package manager for a %s sandbox; pass manager: pip or npm", language)
		}
	}
	if _, ok := installCommand[manager]; !ok {
		return "", fmt.Errorf("manager must be pip, npm or auto, not %q", manager)
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
func installEnv(base []string, extra map[string]string) []string {
	env := make([]string, 0, len(base)+4+len(extra))
	for _, kv := range base {
		if !strings.HasPrefix(kv, "PIP_NO_CACHE_DIR=") && !strings.HasPrefix(kv, "npm_config_cache=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PIP_BREAK_SYSTEM_PACKAGES=1", "PIP_ROOT_USER_ACTION=ignore",
		"PIP_CACHE_DIR="+cacheDir+"/pip", "npm_config_cache="+cacheDir+"/npm")
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

// Output is a captured stream of the helper's: written as it runs, read
// whole (within its limit) for the result.
type Output interface {
	io.Writer
	String() string
}

// Host is what an install needs of the engine, for one sandbox.
type Host interface {
	// RunHelper runs spec as the sandbox's install helper, with the
	// helper's proxy as its Started hook.
	RunHelper(ctx context.Context, spec backend.HelperSpec) (backend.ExecStatus, error)
	// ToolPath is the path of a tool (tar, rm) in the sandbox's image.
	ToolPath(ctx context.Context, name string) (string, error)
	// Exec runs argv in the sandbox as its user and returns its exit
	// code and the start of its stderr.
	Exec(ctx context.Context, argv []string) (code int, stderr string, err error)
	// Untar unpacks r into dir with tarBin, as the sandbox user.
	Untar(ctx context.Context, tarBin, dir string, r io.Reader) error
	// Gone is what a helper's failure means for the call: a policy
	// refusal as it is, else whether the sandbox itself has gone.
	Gone(ctx context.Context, err error) error
}

// Job is one install in a sandbox, as plain data: what to install, the
// sandbox's image, users, limits and labels for the helper, the config in
// force, and where the output goes.
type Job struct {
	Manager  string
	Packages []string
	Image    string
	// HelperUser runs the helper; UID and GID own what lands in the
	// sandbox's workspace.
	HelperUser string
	UID, GID   int
	// The sandbox's limits; the helper gets at least what pip needs.
	MemoryMB, Pids, WorkspaceMB int
	CPUs                        float64
	Labels                      map[string]string
	Runtime                     string
	BaseEnv                     []string
	InstallEnv                  map[string]string // network.install_env
	TimeoutSeconds              int               // limits.max_exec_timeout_seconds
	ConfigFile                  string
	Stdout, Stderr              Output
}

// Install installs job's packages with every package asked for so far in a
// short-lived helper container from the sandbox's image, with no network
// but a proxy to the package indexes, in a fresh workspace of its own (pip
// --user into /workspace/.local, npm into /workspace/node_modules), then
// copies what it installed into the same place in the sandbox's workspace,
// where the sandbox's interpreters already look. The helper never sees the
// sandbox's files, so nothing the sandbox's code wrote (a .pth file, a
// pip.conf, an .npmrc, a package.json with scripts) can run or steer it
// while it has the network. The caller holds the sandbox's install lock.
func (s *State) Install(ctx context.Context, h Host, job Job) (res Result, err error) {
	// Every package asked for so far is installed again, in the helper's
	// fresh workspace, so that the result is one coherent set.
	specs := mergeSpecs(job.Manager, s.specs[job.Manager], job.Packages)
	tctx, cancel := context.WithTimeout(ctx, time.Duration(job.TimeoutSeconds)*time.Second)
	defer cancel()
	status, err := h.RunHelper(tctx, s.helperSpec(tctx, h, job, specs))
	res = Result{Manager: job.Manager, ExitCode: status.ExitCode, Installed: []string{}}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return res, fmt.Errorf("cancelled: %w", ctx.Err())
	case tctx.Err() != nil:
		res.TimedOut, res.ExitCode = true, exitTimedOut
	default:
		return res, h.Gone(ctx, err)
	}
	res.Stdout, res.Stderr = job.Stdout.String(), job.Stderr.String()
	switch {
	case res.ExitCode == 0:
		res.Installed = append(res.Installed, job.Packages...)
		res.Note = installedNote
	case res.TimedOut:
		res.Note = fmt.Sprintf("Nothing was installed: the install ran out of time (%d s, limits.max_exec_timeout_seconds in %s).", job.TimeoutSeconds, job.ConfigFile)
	default:
		res.Note = failureNote(job.Manager, res.Stdout+res.Stderr, job.ConfigFile)
	}
	return res, nil
}

// exitTimedOut is the exit code of an install that ran out of time, as of
// a command's.
const exitTimedOut = 124

// helperSpec is the helper that installs specs for job: within the
// sandbox's limits, labelled as the engine asks, and placing what it
// installed into the sandbox's workspace, where it records the units
// placed and, when all went in, specs as what the sandbox has installed
// with job's manager.
func (s *State) helperSpec(ctx context.Context, h Host, job Job, specs []string) backend.HelperSpec {
	manager := job.Manager
	return backend.HelperSpec{
		Image: job.Image, Cmd: append(append([]string{}, installCommand[manager]...), specs...),
		Env:  append(installEnv(job.BaseEnv, job.InstallEnv), netglue.HelperProxyEnv()...),
		User: job.HelperUser, Network: "none", Runtime: job.Runtime, Stdout: job.Stdout, Stderr: job.Stderr,
		MemoryBytes: max(int64(job.MemoryMB)<<20, 512<<20),
		NanoCPUs:    int64(job.CPUs * 1e9),
		Pids:        int64(max(job.Pids, 256)),
		Labels:      job.Labels,
		WorkspaceMB: job.WorkspaceMB,
		CacheDir:    cacheDir,
		Collect:     collectDir[manager],
		Into: func(r io.Reader) error {
			units, err := placePackages(ctx, h, job.UID, job.GID, collectDir[manager], s.units[manager], r)
			// Whatever was placed is what the next install replaces.
			if s.units == nil {
				s.units = map[string][]string{}
			}
			s.units[manager] = units
			if err == nil {
				if s.specs == nil {
					s.specs = map[string][]string{}
				}
				s.specs[manager] = specs
			}
			return err
		},
	}
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

// failureNote says, from a failed install's output, what went wrong
// and what to do next; cfgFile is the config file in force.
func failureNote(manager, output, cfgFile string) string {
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
