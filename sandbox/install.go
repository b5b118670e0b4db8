package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/install"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netglue"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/output"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/sbfiles"
)

// helperUser is the user install helpers run as: never the sandbox's own,
// so that the install cache they share is out of the sandbox's reach.
func helperUser(sandboxUser string) string {
	if uid, _ := hostcopy.UserIDs(sandboxUser); uid == 65533 {
		return "65532:65532"
	}
	return "65533:65533"
}

// InstallPackages installs packages for a sandbox through a helper
// container (see package install); the sandbox itself never gets a
// network interface.
func (e *Engine) InstallPackages(ctx context.Context, id string, req install.Request) (install.Result, error) {
	out := OutputFunc(req.Output)
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return install.Result{}, err
	}
	cfg := e.cfg.Current()
	if !cfg.Network.Install {
		return install.Result{}, fmt.Errorf("%w: package installs are turned off; set network.install = true in %s to allow them (%s)", ErrPolicy, cfg.File(), appliesSoon)
	}
	manager, err := install.Manager(req.Manager, sb.Lang.Runner, sb.Language)
	if err == nil {
		err = install.CheckPackages(manager, req.Packages)
	}
	if err != nil {
		return install.Result{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := sb.installLock.acquire(ctx, holderInstaller, req.Waiting); err != nil {
		return install.Result{}, fmt.Errorf("cancelled while waiting for the previous install: %w", err)
	}
	defer sb.installLock.release()
	e.begin(sb)
	defer e.end(sb)
	var reached netglue.Reached
	h := &installHost{e: e, sb: sb, proxy: e.helperProxy(sb, netglue.InstallEntries(cfg.Network.InstallEnv), proxyMaxConns(cfg.Network.MaxConnections), &reached)}
	uid, gid := hostcopy.UserIDs(sb.User)
	res, err := sb.installs.Install(ctx, h, install.Job{
		Manager: manager, Packages: req.Packages, Image: sb.Image, HelperUser: helperUser(sb.User), UID: uid, GID: gid,
		MemoryMB: sb.Limits.MemoryMB, Pids: sb.Limits.Pids, WorkspaceMB: sb.Limits.WorkspaceMB, CPUs: sb.Limits.CPUs,
		Labels: map[string]string{
			backend.LabelManaged: "true", backend.LabelHelper: sb.ID, backend.LabelID: sb.ID + "-install",
			backend.LabelOwner: e.owner, backend.LabelInstallation: e.installation, backend.LabelOwnerPID: strconv.Itoa(e.pid), backend.LabelOwnerHost: e.hostname,
		},
		Runtime: e.runtimeFor(ctx, cfg), BaseEnv: sbfiles.SandboxEnv, InstallEnv: cfg.Network.InstallEnv,
		TimeoutSeconds: cfg.Limits.MaxExecTimeoutSeconds, ConfigFile: cfg.File(),
		Stdout: output.NewCapture(cfg.Limits.OutputBytes, streamTo(out, "stdout")), Stderr: output.NewCapture(cfg.Limits.OutputBytes, streamTo(out, "stderr")),
	})
	res.Reached = reached.List()
	if err == nil {
		sb.transcript.add("install_packages ("+manager+")", strings.Join(req.Packages, " "), &ExecResult{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr}, "")
	}
	return res, err
}

// installHost is install.Host for one sandbox.
type installHost struct {
	e     *Engine
	sb    *Sandbox
	proxy func(context.Context, string) (func(), error)
}

func (h *installHost) RunHelper(ctx context.Context, spec backend.HelperSpec) (backend.ExecStatus, error) {
	spec.Started = h.proxy
	return h.e.be.RunHelper(ctx, h.sb.ContainerID, spec)
}

func (h *installHost) ToolPath(ctx context.Context, name string) (string, error) {
	return h.e.toolPath(ctx, h.sb, name)
}

func (h *installHost) Exec(ctx context.Context, argv []string) (int, string, error) {
	var stderr bytes.Buffer
	st, err := h.e.be.Exec(ctx, h.sb.ContainerID, backend.ExecSpec{Cmd: argv, Env: sbfiles.ServerEnv, User: h.sb.User, Stderr: &backend.LimitedBuffer{B: &stderr, N: 4096}})
	return st.ExitCode, stderr.String(), err
}

func (h *installHost) Untar(ctx context.Context, tarBin, dir string, r io.Reader) error {
	return h.e.box(h.sb).Untar(ctx, tarBin, dir, r)
}

func (h *installHost) Gone(ctx context.Context, err error) error {
	if errors.Is(err, ErrPolicy) {
		return err
	}
	return h.e.containerGone(ctx, h.sb, err)
}
