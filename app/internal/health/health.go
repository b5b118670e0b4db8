package health

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// Image is one language's image and whether code in it can run
// (`mcp-sandbox doctor --json`'s images, a contract).
type Image struct {
	Language string `json:"language"`
	Image    string `json:"image"`
	Present  bool   `json:"present"`
	// Interpreter is the program the language runs; InterpreterFound says
	// whether the image has it (checked only for a present image).
	Interpreter      string `json:"interpreter,omitempty"`
	InterpreterFound bool   `json:"interpreter_found"`
	InterpreterError string `json:"interpreter_error,omitempty"`
	// InterpreterUnchecked: the engine did not run the probe in time (a
	// busy machine), so whether the image has it is not known: not
	// runnable as far as doctor can tell, but no alarm in the tray.
	InterpreterUnchecked bool `json:"interpreter_unchecked,omitempty"`
	// Pullable says, for a missing image, whether the engine's registry
	// has it (nil when that could not be asked: Podman has no way to ask
	// without pulling); PullError says why not.
	Pullable  *bool  `json:"pullable,omitempty"`
	PullError string `json:"pull_error,omitempty"`
	// Runnable: code in this language can run now, or once its image is
	// pulled on first use.
	Runnable bool `json:"runnable"`
}

// Kind says what a Problem is about.
type Kind string

// The kinds of problem.
const (
	ImageMissing    Kind = "image-missing"         // not present, and the first call cannot get it
	ImageFirstUse   Kind = "image-first-use"       // not present, pulled by the first call
	InterpreterGone Kind = "interpreter-absent"    // present, without its language's program
	InterpreterSlow Kind = "interpreter-unchecked" // present, its probe not run in time
	CPUsTooHigh     Kind = "cpus"                  // limits.cpus above the engine's CPUs
	MemoryTooHigh   Kind = "memory"                // limits.memory_mb above the engine's memory
)

// Problem is one thing to fix, with the fix.
type Problem struct {
	Kind     Kind
	Language string // the language it stops, "" for every one
	Image    string
	// Blocking: code (in Language, or in any language when it is "")
	// cannot run until it is fixed.
	Blocking bool
	// Text is the sentence doctor prints: what is wrong and what to do.
	Text string
	// Table and Key name the setting that picks another image
	// (`python = "…"` under [images]); empty when it is not about one.
	Table, Key string
	// Pull is set when pulling Image fixes it (the window's button).
	Pull bool
}

// Engine is what the checks found on one engine.
type Engine struct {
	CPUs            int   // the engine's CPUs (0: it did not say)
	MemoryBytes     int64 // the engine's memory (0: it did not say)
	RunscRegistered bool
	DefaultRuntime  string
	InfoErr         error `json:"-"` // why the engine's info could not be read
	Images          []Image
	Problems        []Problem
}

// OK says whether nothing blocks: every configured language can run and
// every limit fits the engine.
func (e *Engine) OK() bool {
	for _, p := range e.Problems {
		if p.Blocking {
			return false
		}
	}
	return true
}

// Blocking returns the problems that keep code from running.
func (e *Engine) Blocking() []Problem {
	var out []Problem
	for _, p := range e.Problems {
		if p.Blocking {
			out = append(out, p)
		}
	}
	return out
}

// Check runs every check against the engine cli reaches, for cfg; podman
// says the engine is Podman (which cannot say whether its registry has an
// image without pulling it). It starts throwaway, hardened helper
// containers (one per image and program) to look for interpreters, and
// returns within about 40 s whatever answers.
func Check(ctx context.Context, cli *client.Client, cfg *config.Config, podman bool) *Engine {
	e := &Engine{}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if info, err := cli.Info(ictx); err == nil {
		_, e.RunscRegistered = info.Runtimes["runsc"]
		e.DefaultRuntime = info.DefaultRuntime
		e.CPUs, e.MemoryBytes = info.NCPU, info.MemTotal
		e.checkLimits(cfg)
	} else {
		e.InfoErr = fmt.Errorf("read the engine's info: %w", err)
	}
	for _, name := range cfg.LanguageNames() {
		l, _ := cfg.Language(name)
		_, err := cli.ImageInspect(ictx, l.Image)
		e.Images = append(e.Images, Image{Language: name, Image: l.Image, Present: err == nil})
	}
	e.checkMissingImages(ictx, cli, cfg, podman)
	e.probeInterpreters(ctx, cli, cfg)
	for i := range e.Images {
		im := &e.Images[i]
		if im.Present {
			im.Runnable = im.Interpreter == "" || im.InterpreterFound
		} else {
			im.Runnable = cfg.Images.Pull != "never" && (im.Pullable == nil || *im.Pullable)
		}
	}
	return e
}

func (e *Engine) add(p Problem, format string, args ...any) {
	p.Text = fmt.Sprintf(format, args...)
	e.Problems = append(e.Problems, p)
}

// checkLimits compares the sandbox limits with what the engine has: a CPU
// limit above its CPUs makes every create fail, and a memory limit above
// its memory limits nothing.
func (e *Engine) checkLimits(cfg *config.Config) {
	lim := cfg.Limits
	if n := e.CPUs; n > 0 && lim.CPUs > float64(n) {
		e.add(Problem{Kind: CPUsTooHigh, Blocking: true},
			"limits.cpus = %g but the engine has %d CPU(s): every sandbox would fail to start; set limits.cpus to %d or less in %s",
			lim.CPUs, n, n, cfg.File())
	}
	if m := e.MemoryBytes; m > 0 && int64(lim.MemoryMB)<<20 > m {
		e.add(Problem{Kind: MemoryTooHigh},
			"limits.memory_mb = %d is more than the engine's %d MB of memory: the limit holds nothing back; set it lower in %s",
			lim.MemoryMB, m>>20, cfg.File())
	}
}

// Attention says in a few words what keeps code from running ("code in
// bash cannot run"), or "" when nothing does or e is nil: the window's
// headline and the tray's menu and title say it alike.
func (e *Engine) Attention() string {
	if e == nil || e.OK() {
		return ""
	}
	var langs []string
	for _, p := range e.Blocking() {
		if p.Language == "" {
			return "no sandbox can start until the limits fit the engine"
		}
		if !slices.Contains(langs, p.Language) {
			langs = append(langs, p.Language)
		}
	}
	return "code in " + strings.Join(langs, ", ") + " cannot run"
}
