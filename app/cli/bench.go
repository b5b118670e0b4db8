package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/bench"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

func init() {
	register(command{name: "bench", summary: "measure this server against plain docker commands (run_code, create, one-shot)", run: runBench})
}

func runBench(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "bench", "[--rounds N] [--image IMAGE] [--pull POLICY] [--runtime RUNTIME] [--out FILE] [--flood-mib MIB] [--kubernetes] [--kubeconfig FILE] [--context CONTEXT] [--namespace NAMESPACE] [--runtime-class CLASS] [--warm-pool SIZE] [--kubectl BINARY]")
	rounds := fs.Int("rounds", 20, "`N` interleaved rounds of each comparison")
	image := fs.String("image", "", "the Python `IMAGE` both sides run (default: images.python of the config)")
	pull := fs.String("pull", "", "images.pull `POLICY` for the measured server (default: the config's)")
	rt := fs.String("runtime", "", "the OCI `RUNTIME` of the server's sandboxes and the baselines' docker run (runsc: gVisor; default: the engine's)")
	out := fs.String("out", "", "also write the table to `FILE` (and JSON to FILE.json)")
	floodMiB := fs.Int("flood-mib", bench.DefaultFloods.ReadMiB, "the red team's floods, last, each with the server's peak memory beside its bound: 12 parallel read_file of a `MIB` MiB file, 16 figures of MIB MiB, 4 endless printers, 300 trickled HTTP bodies without a token, 50 stalled readers of a 2×MIB MiB preview (about 40 s at 16; 0: no floods)")
	kube := addKubeBenchFlags(fs)
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	if *rounds < 1 || *floodMiB < 0 {
		fs.Usage()
		return 2
	}
	cfg, err := config.Load(config.Path())
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	if *image == "" {
		*image = cfg.Images.Python
	}
	if *pull == "" {
		*pull = cfg.Images.Pull
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var kh *bench.KubeHarness
	var ko bench.KubeOptions
	if kube.wanted(cfg) {
		ko = kube.options(cfg, self, *image, *pull, e.Stderr)
		if kh, err = bench.StartKube(ctx, ko); err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: kubernetes: %v\n", err)
			return 1
		}
		defer kh.Close()
	}
	floods := bench.DefaultFloods
	floods.ReadMiB = *floodMiB
	h, err := bench.Start(ctx, bench.Options{Server: self, Image: *image, Pull: *pull, Runtime: *rt, Log: e.Stderr, Floods: floods})
	switch {
	case err != nil && kh == nil:
		fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: %v\n", err)
		return 1
	case err != nil:
		// With backend.kind = "kubernetes" there may be no Docker engine
		// here: the Kubernetes rows go on alone, and say so.
		fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: no Docker rows (%v); measuring the Kubernetes rows alone\n", err)
		h = nil
	default:
		defer h.Close()
	}
	if err := benchRounds(ctx, e, h, kh, *rounds); err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: %v\n", err)
		return 1
	}
	reps, code := benchReports(ctx, e, h, kh, ko.WarmPool)
	if *out != "" {
		if werr := writeBenchFiles(reps, *out); werr != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", werr)
			return 1
		}
	}
	return code
}

// benchReport is one table of the run: Docker's rows or the Kubernetes
// rows, and how it is written for people.
type benchReport struct {
	rep  bench.Report
	text func(io.Writer) error
	json string // the JSON file's suffix after the --out path
}

// benchReports finishes the harnesses, writes their tables to stdout,
// and returns them with bench's exit code.
func benchReports(ctx context.Context, e *Env, h *bench.Harness, kh *bench.KubeHarness, warmPool int) ([]benchReport, int) {
	var reps []benchReport
	code := 0
	if h != nil {
		rep, err := h.Finish(ctx)
		if err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: %v\n", err)
			code = 1
		}
		reps = append(reps, benchReport{rep, rep.WriteText, ".json"})
	}
	if kh != nil {
		rep := kh.Report()
		reps = append(reps, benchReport{rep, func(w io.Writer) error { return rep.WriteKubeText(w, warmPool) }, ".kubernetes.json"})
	}
	for i, r := range reps {
		if i > 0 {
			fmt.Fprintln(e.Stdout)
		}
		if err := r.text(e.Stdout); err != nil {
			return reps, 1
		}
	}
	return reps, code
}

// writeBenchFiles writes the tables to path, one after the other, and
// each report's JSON beside it (path.json for Docker's rows,
// path.kubernetes.json for the Kubernetes rows).
func writeBenchFiles(reps []benchReport, path string) error {
	type file struct {
		path  string
		write func(*os.File) error
	}
	files := []file{{path, func(w *os.File) error {
		for i, r := range reps {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if err := r.text(w); err != nil {
				return err
			}
		}
		return nil
	}}}
	for _, r := range reps {
		files = append(files, file{path + r.json, func(w *os.File) error { return r.rep.WriteJSON(w) }})
	}
	for _, f := range files {
		w, err := os.Create(f.path)
		if err != nil {
			return err
		}
		err = f.write(w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return nil
}

// benchRounds runs the rounds: Docker's rows, and with kh the Kubernetes
// rows in the same rounds (in alternating order from round to round), so
// both tables come from one run on one machine state.
func benchRounds(ctx context.Context, e *Env, h *bench.Harness, kh *bench.KubeHarness, rounds int) error {
	for i := 0; i < rounds; i++ {
		var steps []func(context.Context) error
		if h != nil {
			steps = append(steps, h.Round)
		}
		if kh != nil {
			steps = append(steps, kh.Round)
		}
		if i%2 == 1 && len(steps) == 2 {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, round := range steps {
			if err := round(ctx); err != nil {
				return fmt.Errorf("round %d: %w", i+1, err)
			}
		}
		fmt.Fprintf(e.Stderr, "\rbench: round %d of %d", i+1, rounds)
	}
	fmt.Fprintln(e.Stderr)
	return nil
}
