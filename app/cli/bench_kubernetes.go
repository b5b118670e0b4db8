package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/bench"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// kubeBenchFlags are bench's flags for the Kubernetes rows; their
// defaults come from the config's [kubernetes] table.
type kubeBenchFlags struct {
	on                                        *bool
	kubeconfig, context, namespace, class, kc *string
	warmPool                                  *int
}

func addKubeBenchFlags(fs *flag.FlagSet) kubeBenchFlags {
	return kubeBenchFlags{
		on:         fs.Bool("kubernetes", false, "measure the Kubernetes rows against kubectl (also when backend.kind is \"kubernetes\")"),
		kubeconfig: fs.String("kubeconfig", "", "the kubeconfig `FILE` of the Kubernetes rows (default: kubernetes.kubeconfig of the config)"),
		context:    fs.String("context", "", "the kubeconfig `CONTEXT` (default: kubernetes.context)"),
		namespace:  fs.String("namespace", "", "the `NAMESPACE` (default: kubernetes.namespace)"),
		class:      fs.String("runtime-class", "", "both sides' `RUNTIMECLASS` (default: kubernetes.runtime_class)"),
		kc:         fs.String("kubectl", "", "the kubectl `BINARY` of the baselines (default: kubectl on PATH)"),
		warmPool:   fs.Int("warm-pool", -1, "the server's warm pool `SIZE` for python (default: kubernetes.warm_pool's)"),
	}
}

// wanted reports whether bench measures the Kubernetes rows.
func (f kubeBenchFlags) wanted(cfg *config.Config) bool {
	return *f.on || cfg.Backend.Kind == config.BackendKubernetes
}

// options are the harness's options: the flags, else the config's.
func (f kubeBenchFlags) options(cfg *config.Config, self, image, pull string, log io.Writer) bench.KubeOptions {
	k := cfg.Kubernetes
	pick := func(flag *string, conf string) string {
		if *flag != "" {
			return *flag
		}
		return conf
	}
	o := bench.KubeOptions{
		Server: self, Image: image, Pull: pull, Kubectl: *f.kc, Log: log,
		Kubeconfig: pick(f.kubeconfig, k.Kubeconfig), Context: pick(f.context, k.Context),
		Namespace: pick(f.namespace, k.Namespace), RuntimeClass: pick(f.class, k.RuntimeClass),
		WarmPool: k.WarmPool["python"],
	}
	if *f.warmPool >= 0 {
		o.WarmPool = *f.warmPool
	}
	return o
}

// runKubeBench measures the Kubernetes rows, rounds times, and writes
// their table.
func runKubeBench(ctx context.Context, e *Env, o bench.KubeOptions, rounds int) int {
	h, err := bench.StartKube(ctx, o)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: kubernetes: %v\n", err)
		return 1
	}
	defer h.Close()
	for i := 0; i < rounds; i++ {
		if err := h.Round(ctx); err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: bench: kubernetes: round %d: %v\n", i+1, err)
			return 1
		}
		fmt.Fprintf(e.Stderr, "\rbench: kubernetes round %d of %d", i+1, rounds)
	}
	fmt.Fprintln(e.Stderr)
	if err := h.Report().WriteKubeText(e.Stdout, o.WarmPool); err != nil {
		return 1
	}
	return 0
}
