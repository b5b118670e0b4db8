package health

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/interp"
)

// interpreterProbeTimeout bounds the whole interpreter check: the probes
// run at once, each in a throwaway container that starts in about a
// second on an idle machine. (A variable for the test of a late probe.)
var interpreterProbeTimeout = 30 * time.Second

// checkMissingImages says, for each image that is not present, whether
// the first call in its language can get it: with images.pull = "never"
// it cannot; otherwise the engine asks its registry for the image's
// manifest (nothing is downloaded), so an offline machine, a proxy, a
// registry outage or a wrong name shows now, not at the first call.
func (e *Engine) checkMissingImages(ctx context.Context, cli *client.Client, cfg *config.Config, podman bool) {
	for i := range e.Images {
		im := &e.Images[i]
		if im.Present {
			continue
		}
		table, key := cfg.ImageSetting(im.Language)
		p := Problem{Kind: ImageMissing, Language: im.Language, Image: im.Image, Blocking: true, Table: table, Key: key, Pull: true}
		instead := fmt.Sprintf("or set %s = \"IMAGE\" under [%s] in %s to an image this engine has (`docker images` lists them)", key, table, cfg.File())
		switch {
		case cfg.Images.Pull == "never":
			p.Pull = false // the server would not use it: the fix is the setting
			e.add(p, "image %s (%s) is not present and images.pull is \"never\": code in %s cannot run; run `docker pull %s`, %s",
				im.Image, im.Language, im.Language, im.Image, instead)
		case podman:
			p.Kind, p.Blocking = ImageFirstUse, false
			e.add(p, "image %s (%s) is not present yet; it is pulled on first use (Podman cannot say whether its registry has it without pulling: run `docker pull %s` now to be sure)",
				im.Image, im.Language, im.Image)
		default:
			_, err := cli.DistributionInspect(ctx, im.Image, "")
			ok := err == nil
			im.Pullable = &ok
			if ok {
				p.Kind, p.Blocking = ImageFirstUse, false
				e.add(p, "image %s (%s) is not present yet; it is pulled on first use (or run `docker pull %s` now)", im.Image, im.Language, im.Image)
				continue
			}
			im.PullError = err.Error()
			p.Pull = false // the registry does not answer: a Pull button cannot work
			e.add(p, "image %s (%s) is not present and cannot be pulled (%v): code in %s cannot run; check the engine reaches its registry, %s",
				im.Image, im.Language, err, im.Language, instead)
		}
	}
}

// probeInterpreters checks that each present image has the program its
// language runs (python3 for python, node for javascript, …): an image
// that lacks it makes every run_code in that language fail, and only
// running the image tells. Each probe is `PROGRAM --version` in a helper
// container, hardened like a sandbox and with no network, through the
// backend the server uses. Programs that exist but refuse --version count
// as present: only "not found" (127) and "cannot be run" (126) are
// reported.
func (e *Engine) probeInterpreters(ctx context.Context, cli *client.Client, cfg *config.Config) {
	ctx, cancel := context.WithTimeout(ctx, interpreterProbeTimeout)
	defer cancel()
	be := docker.New(cli, slog.New(slog.DiscardHandler))
	// One probe per image and program, however many languages share them.
	type probe struct{ image, program string }
	var probes []probe
	for i := range e.Images {
		im := &e.Images[i]
		if l, _ := cfg.Language(im.Language); im.Present && interp.Program(l) != "" {
			im.Interpreter = interp.Program(l)
			if p := (probe{im.Image, im.Interpreter}); !slices.Contains(probes, p) {
				probes = append(probes, p)
			}
		}
	}
	why := make([]string, len(probes)) // "" when the program runs, else why not
	late := make([]bool, len(probes))  // the probe did not finish in time
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() { why[i], late[i] = runProbe(ctx, be, p.image, p.program) })
	}
	wg.Wait()
	for i := range e.Images {
		im := &e.Images[i]
		if im.Interpreter != "" {
			j := slices.Index(probes, probe{im.Image, im.Interpreter})
			im.InterpreterError, im.InterpreterUnchecked = why[j], late[j]
			im.InterpreterFound = im.InterpreterError == ""
		}
	}
	for _, im := range e.Images {
		if im.InterpreterUnchecked {
			e.add(Problem{Kind: InterpreterSlow, Language: im.Language, Image: im.Image},
				"whether image %s (%s) has %s is not known: the engine did not run the check within %s (a busy machine); `mcp-sandbox doctor` checks again",
				im.Image, im.Language, im.Interpreter, interpreterProbeTimeout)
			continue
		}
		if im.Present && !im.InterpreterFound && im.Interpreter != "" {
			table, key := cfg.ImageSetting(im.Language)
			e.add(Problem{Kind: InterpreterGone, Language: im.Language, Image: im.Image, Blocking: true, Table: table, Key: key},
				"image %s (%s) cannot run %s (%s): set %s in the config file to an image that has it",
				im.Image, im.Language, im.Interpreter, im.InterpreterError, cfg.ImageKey(im.Language))
		}
	}
}

// probeSpec is the helper that runs `program --version` in image. It is
// labelled a probe (backend.HelperProbe): should this process be killed
// before it removes it, a server's reaper will, once it is
// backend.ProbeLifetime old.
func probeSpec(image, program string) backend.HelperSpec {
	return backend.HelperSpec{
		Image: image, Cmd: []string{program, "--version"},
		Network: "none", MemoryBytes: 128 << 20, NanoCPUs: 500_000_000, Pids: 64, WorkspaceMB: 1,
		Labels: map[string]string{backend.LabelManaged: "true", backend.LabelHelper: backend.HelperProbe},
		Stdout: io.Discard, Stderr: io.Discard,
	}
}

// runProbe runs `program --version` in image and says why the program
// cannot run there, or "" when it can; late says the probe did not finish
// within the check's time (why says so), which tells nothing about the
// image.
func runProbe(ctx context.Context, be *docker.Backend, image, program string) (why string, late bool) {
	st, err := be.RunHelper(ctx, "", probeSpec(image, program))
	switch {
	case err != nil && ctx.Err() != nil:
		return "the engine did not run the check in time", true
	case err != nil:
		return err.Error(), false
	case st.ExitCode == 127:
		return "not found in the image", false
	case st.ExitCode == 126:
		return "found but not executable", false
	}
	return "", false
}
