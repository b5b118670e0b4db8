package cli

import (
	"flag"
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
		on:         fs.Bool("kubernetes", false, "also measure the Kubernetes rows against kubectl, in the same rounds as Docker's rows (also when backend.kind is \"kubernetes\")"),
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
