package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
)

// diagnoseKubernetes fills the Kubernetes part of the report (backend.kind
// "kubernetes"): the context, agent-sandbox, the RuntimeClass and RBAC, by
// kubernetes.Doctor. Docker is not looked for. It reports whether every
// check passed.
func diagnoseKubernetes(ctx context.Context, cfg *config.Config, r *report, problem func(string, ...any)) bool {
	r.Kubernetes = kubernetes.Doctor(ctx, kubernetesConfig(cfg), slog.New(slog.DiscardHandler), imageProbes(cfg)...)
	r.Docker.Reason = `backend.kind is "kubernetes": Docker is not used`
	for _, c := range r.Kubernetes.Checks {
		if !c.OK {
			problem("Kubernetes %s: %s — %s", c.Name, c.Detail, c.Fix)
		}
	}
	return r.Kubernetes.OK
}

// printKubernetesSection prints the cluster's checks for a person, one
// line each. Every value the cluster or the kubeconfig gave is cleaned
// (sandbox/printable) first, so none can add a line or restyle the
// terminal.
func printKubernetesSection(w io.Writer, k *kubernetes.Report) {
	fmt.Fprintln(w, "Kubernetes")
	fmt.Fprintf(w, "  context:   %s\n", contextLine(k))
	fmt.Fprintf(w, "  namespace: %s\n", clean1(k.Namespace))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range k.Checks {
		mark := "ok"
		switch {
		case !c.OK:
			mark = "FAIL"
		case c.Fix != "":
			mark = "warn" // it works, in a lesser way the fix would end
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", mark, c.Name, clean1(c.Detail))
	}
	tw.Flush()
}

// clean1 is a value from outside, cleaned for one line of a terminal.
func clean1(s string) string { return printable.Clean(s, 0) }

// contextLine is the context doctor tried, with its cluster and server
// as far as the kubeconfig names them.
func contextLine(k *kubernetes.Report) string {
	switch {
	case k.Cluster == "":
		return clean1(k.Context) + " (no such context in the kubeconfig, or no cluster in it)"
	case k.Server == "":
		return fmt.Sprintf("%s (cluster %s, no server in the kubeconfig)", clean1(k.Context), clean1(k.Cluster))
	}
	return fmt.Sprintf("%s (cluster %s, %s)", clean1(k.Context), clean1(k.Cluster), clean1(k.Server))
}

// imageProbes are the languages' images doctor runs on the cluster, each
// with the program run_code runs in it.
func imageProbes(cfg *config.Config) []kubernetes.ImageProbe {
	var out []kubernetes.ImageProbe
	for _, name := range cfg.LanguageNames() {
		l, _ := cfg.Language(name)
		if prog := sandbox.RunProgram(l); prog != "" {
			out = append(out, kubernetes.ImageProbe{Language: name, Image: l.Image, Program: prog, Pull: cfg.Images.Pull, Setting: cfg.ImageKey(name)})
		}
	}
	return out
}
