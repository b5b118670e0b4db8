package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

func init() {
	register(command{name: "doctor", summary: "check Docker, images, clients and the config, and say what to fix", run: runDoctor})
	detectDockerHost = func(ctx context.Context, e *Env) string {
		if h := e.getenv("DOCKER_HOST"); h != "" {
			return h
		}
		cfg, err := config.Load(config.Path())
		if err != nil {
			cfg = config.Default()
		}
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return dockerhost.Detect(dctx, dockerOptions(e, cfg)).PinnedHost()
	}
}

// report is `mcp-sandbox doctor --json` (a contract: docker.chosen,
// docker.candidates, clients and config are relied on by outside tools).
type report struct {
	OK       bool                       `json:"ok"`
	Docker   dockerReport               `json:"docker"`
	Images   []imageReport              `json:"images"`
	Clients  []clientconfig.ClientState `json:"clients"`
	Config   configReport               `json:"config"`
	Server   serverReport               `json:"server"`
	Install  installReport              `json:"install"`
	StateDir dirReport                  `json:"state_dir"`
	Files    filesReport                `json:"files"`
	Problems []string                   `json:"problems"`

	// Kubernetes is the cluster's checks, with backend.kind "kubernetes"
	// (Docker is then not looked for).
	Kubernetes *kubernetes.Report `json:"kubernetes,omitempty"`

	limitsTooHigh bool // a limit no sandbox can be given on this engine
}

type dockerReport struct {
	Chosen     *dockerhost.Candidate  `json:"chosen"`
	Candidates []dockerhost.Candidate `json:"candidates"`
	Reason     string                 `json:"reason"`
	Hint       string                 `json:"hint,omitempty"`
	Runtime    runtimeReport          `json:"runtime"`
	// CPUs and MemoryBytes are what the engine has, which every sandbox's
	// limits must fit in (0 when it did not say).
	CPUs        int   `json:"cpus,omitempty"`
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
}

type runtimeReport struct {
	Configured      string `json:"configured"`
	RunscRegistered bool   `json:"runsc_registered"`
	InUse           string `json:"in_use"`
}

// imageReport is one language's image (health.Image: the window shows the
// same).
type imageReport = health.Image

type configReport struct {
	Path  string `json:"path"`
	Valid bool   `json:"valid"`
	Error string `json:"error,omitempty"`
}

type serverReport struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

type dirReport struct {
	Path     string `json:"path"`
	Writable bool   `json:"writable"`
}

func runDoctor(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "doctor", "[--json]")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	r := diagnose(ctx, e)
	if *asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintln(e.Stdout, string(b))
	} else {
		printReport(e.Stdout, r)
	}
	if !r.OK {
		return 1
	}
	return 0
}

func diagnose(ctx context.Context, e *Env) *report {
	r := &report{Problems: []string{}}
	problem := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }

	r.Config.Path = config.Path()
	cfg, err := config.Load(r.Config.Path)
	r.Config.Valid = err == nil
	if err != nil {
		r.Config.Error = err.Error()
		problem("the config file is invalid: %v — fix it or delete it to use the defaults", err)
		cfg = config.Default()
	}

	var engineOK bool
	switch {
	case !r.Config.Valid:
		// The defaults would pick Docker: a config that says Kubernetes
		// but does not load must not be checked as Docker in its place.
		r.Docker.Reason = "not checked: the config file does not load, so which backend it names is not known"
	case cfg.Backend.Kind == config.BackendKubernetes:
		engineOK = diagnoseKubernetes(ctx, cfg, r, problem)
	default:
		engineOK = diagnoseDocker(ctx, e, cfg, r, problem)
	}

	r.Clients = clientconfig.Overview(clientconfig.Env{Getenv: e.getenv})
	if exe, err := serverExecutable(); err == nil {
		r.Server.Path = exe
	} else if self, err := os.Executable(); err == nil {
		r.Server.Path = self
	}
	r.Server.Version = buildinfo.Get().String()
	r.Install = checkInstall(ctx, gatherInstall(e), problem)

	r.StateDir.Path = config.StateDir()
	if err := os.MkdirAll(r.StateDir.Path, 0o700); err == nil {
		if f, err := os.CreateTemp(r.StateDir.Path, ".doctor-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			r.StateDir.Writable = true
		}
	}
	if !r.StateDir.Writable {
		problem("the state directory %s is not writable: audit log, pause flag and sandbox records cannot be kept", r.StateDir.Path)
	}
	home, _ := os.UserHomeDir()
	if h := e.getenv("HOME"); h != "" {
		home = h
	}
	r.Files = checkFiles(cfg, home)
	r.OK = engineOK && r.Config.Valid && !r.limitsTooHigh
	for _, im := range r.Images {
		r.OK = r.OK && im.Runnable
	}
	return r
}

// diagnoseDocker fills the Docker part of the report: the engine the
// rule picks, its runtime and images. It reports whether an engine is used.
func diagnoseDocker(ctx context.Context, e *Env, cfg *config.Config, r *report, problem func(string, ...any)) bool {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	det := dockerhost.Detect(dctx, dockerOptions(e, cfg))
	cancel()
	r.Docker = dockerReport{Chosen: det.Chosen, Candidates: det.Candidates, Reason: det.Reason, Hint: det.Hint}
	r.Docker.Runtime.Configured = cfg.Docker.Runtime
	switch {
	case det.Chosen == nil && det.Explicit() != nil:
		problem("no Docker engine is used: %s", det.Hint)
	case det.Chosen == nil:
		problem("no Docker engine answered: %s", det.Hint)
		if nothingInstalled(det) {
			problem("no container engine seems to be installed: %s", installAdvice(runtime.GOOS))
		}
	default:
		if cli, err := client.NewClientWithOpts(det.Chosen.ClientOptions()...); err == nil {
			defer cli.Close()
			inspectEngine(ctx, cli, cfg, r, problem)
		}
	}

	return det.Chosen != nil
}

// inspectEngine fills the runtime and image parts of the report through
// health.Check, the rule the window's Status tab shows too.
func inspectEngine(ctx context.Context, cli *client.Client, cfg *config.Config, r *report, problem func(string, ...any)) {
	podman := r.Docker.Chosen != nil && r.Docker.Chosen.Engine == "Podman"
	h := health.Check(ctx, cli, cfg, podman)
	r.Docker.Runtime.RunscRegistered, r.Docker.Runtime.InUse = h.RunscRegistered, h.DefaultRuntime
	r.Docker.CPUs, r.Docker.MemoryBytes = h.CPUs, h.MemoryBytes
	r.Images = h.Images
	for _, p := range h.Problems {
		problem("%s", p.Text)
		r.limitsTooHigh = r.limitsTooHigh || p.Kind == health.CPUsTooHigh
	}
	switch cfg.Docker.Runtime {
	case "runsc":
		r.Docker.Runtime.InUse = "runsc"
		if !r.Docker.Runtime.RunscRegistered {
			problem("docker.runtime is \"runsc\" but the engine has no runsc runtime registered: install gVisor and add it to /etc/docker/daemon.json, or set docker.runtime = \"auto\"")
		}
	case "auto":
		if r.Docker.Runtime.RunscRegistered {
			r.Docker.Runtime.InUse = "runsc"
		}
	case "runc":
		r.Docker.Runtime.InUse = "runc"
	}
}

func printReport(w io.Writer, r *report) {
	switch {
	case r.Kubernetes != nil:
		printKubernetesSection(w, r.Kubernetes)
	case !r.Config.Valid:
		// Neither Docker nor Kubernetes was looked at: say so, not "no
		// Docker engine answered".
		fmt.Fprintf(w, "Engine\n  %s\n", r.Docker.Reason)
	default:
		printDockerSection(w, &dockerhost.Result{Chosen: r.Docker.Chosen, Candidates: r.Docker.Candidates, Reason: r.Docker.Reason, Hint: r.Docker.Hint})
		rt := r.Docker.Runtime
		if rt.InUse != "" {
			fmt.Fprintf(w, "  runtime: %s (gVisor runsc registered: %v)\n", rt.InUse, rt.RunscRegistered)
		}
		fmt.Fprintln(w, "\nImages")
	}
	for _, im := range r.Images {
		state := "present"
		switch {
		case !im.Present && im.Runnable && im.Pullable != nil:
			state = "missing, pulled on first use"
		case !im.Present && im.Runnable:
			state = "missing, pulled on first use (whether the registry has it is not known)"
		case !im.Present:
			state = "MISSING: code in " + im.Language + " cannot run"
		case im.InterpreterFound:
			state = "present, has " + im.Interpreter
		case im.InterpreterUnchecked:
			state = "present; " + im.Interpreter + " not checked in time (run doctor again)"
		case im.Interpreter != "":
			state = "PRESENT, BUT CANNOT RUN " + im.Interpreter
		}
		fmt.Fprintf(w, "  %-11s %-40s %s\n", im.Language, im.Image, state)
	}
	fmt.Fprintln(w, "\nClients")
	for _, c := range r.Clients {
		state := "not installed"
		switch {
		case c.Error != "":
			state = "error: " + c.Error
		case c.Configured:
			state = "configured"
		case c.Installed:
			state = "installed, not configured (mcp-sandbox clients install --client " + c.Name + ")"
		}
		fmt.Fprintf(w, "  %-12s %s\n", c.Name, state)
	}
	fmt.Fprintln(w, "\nConfig")
	valid := "valid"
	if !r.Config.Valid {
		valid = "INVALID: " + r.Config.Error
	} else if _, err := os.Stat(r.Config.Path); err != nil {
		valid = "not created yet (defaults in use)"
	}
	fmt.Fprintf(w, "  %s: %s\n", r.Config.Path, valid)
	fmt.Fprintf(w, "  state dir: %s (writable: %v)\n", r.StateDir.Path, r.StateDir.Writable)
	fmt.Fprintf(w, "  server: %s %s\n", filepath.Clean(r.Server.Path), r.Server.Version)
	printInstall(w, r.Install)
	printFiles(w, r.Files)
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "\nEverything needed is in place.")
		return
	}
	fmt.Fprintln(w, "\nTo fix")
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}
