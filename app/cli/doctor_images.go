package cli

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
)

// interpreterProbeTimeout bounds the whole interpreter check: the probes
// run at once, each in a throwaway container that starts in about a
// second on an idle machine.
const interpreterProbeTimeout = 30 * time.Second

// probeInterpreters checks that each present image has the program its
// language runs (python3 for python, node for javascript, …): an image
// that lacks it makes every run_code in that language fail, and only
// running the image tells. Each probe is `PROGRAM --version` in a helper
// container, hardened like a sandbox and with no network, through the
// backend the server uses. Programs that exist but refuse --version count
// as present: only "not found" (127) and "cannot be run" (126) are
// reported.
func probeInterpreters(ctx context.Context, cli *client.Client, cfg *config.Config, images []imageReport, problem func(string, ...any)) {
	ctx, cancel := context.WithTimeout(ctx, interpreterProbeTimeout)
	defer cancel()
	be := docker.New(cli, slog.New(slog.DiscardHandler))
	// One probe per image and program, however many languages share them.
	type probe struct{ image, program string }
	var probes []probe
	for i := range images {
		im := &images[i]
		if l, _ := cfg.Language(im.Language); im.Present && len(l.Run) > 0 {
			im.Interpreter = l.Run[0]
			if p := (probe{im.Image, im.Interpreter}); !slices.Contains(probes, p) {
				probes = append(probes, p)
			}
		}
	}
	why := make([]string, len(probes)) // "" when the program runs, else why not
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() { why[i] = runProbe(ctx, be, p.image, p.program) })
	}
	wg.Wait()
	for i := range images {
		im := &images[i]
		if im.Interpreter != "" {
			im.InterpreterError = why[slices.Index(probes, probe{im.Image, im.Interpreter})]
			im.InterpreterFound = im.InterpreterError == ""
		}
	}
	for _, im := range images {
		if im.Present && !im.InterpreterFound && im.Interpreter != "" {
			key := "languages." + im.Language + ".image"
			if slices.Contains([]string{"python", "javascript", "bash"}, im.Language) {
				key = "images." + im.Language
			}
			problem("image %s (%s) cannot run %s (%s): set %s in the config file to an image that has it",
				im.Image, im.Language, im.Interpreter, im.InterpreterError, key)
		}
	}
}

// runProbe runs `program --version` in image and says why the program
// cannot run there, or "" when it can.
func runProbe(ctx context.Context, be *docker.Backend, image, program string) string {
	st, err := be.RunHelper(ctx, "", sandbox.HelperSpec{
		Image: image, Cmd: []string{program, "--version"},
		Network: "none", MemoryBytes: 128 << 20, NanoCPUs: 500_000_000, Pids: 64, WorkspaceMB: 1,
		Stdout: io.Discard, Stderr: io.Discard,
	})
	switch {
	case err != nil:
		return err.Error()
	case st.ExitCode == 127:
		return "not found in the image"
	case st.ExitCode == 126:
		return "found but not executable"
	}
	return ""
}
