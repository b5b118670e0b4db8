package cli

import (
	"context"
	"fmt"
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
	fs := newFlagSet(e, "bench", "[--rounds N] [--image IMAGE] [--pull POLICY] [--runtime RUNTIME] [--out FILE] [--kubernetes] [--kubeconfig FILE] [--context CONTEXT] [--namespace NAMESPACE] [--runtime-class CLASS] [--warm-pool SIZE] [--kubectl BINARY]")
	rounds := fs.Int("rounds", 20, "`N` interleaved rounds of each comparison")
	image := fs.String("image", "", "the Python `IMAGE` both sides run (default: images.python of the config)")
	pull := fs.String("pull", "", "images.pull `POLICY` for the measured server (default: the config's)")
	rt := fs.String("runtime", "", "the OCI `RUNTIME` of the server's sandboxes and the baselines' docker run (runsc: gVisor; default: the engine's)")
	out := fs.String("out", "", "also write the table to `FILE` (and JSON to FILE.json)")
	kube := addKubeBenchFlags(fs)
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	if *rounds < 1 {
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
	if kube.wanted(cfg) {
		return runKubeBench(ctx, e, kube.options(cfg, self, *image, *pull, e.Stderr), *rounds)
	}
	h, err := bench.Start(ctx, bench.Options{Server: self, Image: *image, Pull: *pull, Runtime: *rt, Log: e.Stderr})
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: %v\n", err)
		return 1
	}
	defer h.Close()
	for i := 0; i < *rounds; i++ {
		if err := h.Round(ctx); err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: round %d: %v\n", i+1, err)
			return 1
		}
		fmt.Fprintf(e.Stderr, "\rbench: round %d of %d", i+1, *rounds)
	}
	fmt.Fprintln(e.Stderr)
	rep, err := h.Finish(ctx)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: %v\n", err)
	}
	if werr := rep.WriteText(e.Stdout); werr != nil {
		return 1
	}
	if *out != "" {
		if werr := writeBenchFiles(rep, *out); werr != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", werr)
			return 1
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

func writeBenchFiles(rep bench.Report, path string) error {
	for _, f := range []struct {
		path  string
		write func(*os.File) error
	}{
		{path, func(w *os.File) error { return rep.WriteText(w) }},
		{path + ".json", func(w *os.File) error { return rep.WriteJSON(w) }},
	} {
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
