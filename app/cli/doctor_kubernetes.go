package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
)

// diagnoseKubernetes fills the Kubernetes part of the report (backend.kind
// "kubernetes"): the context, agent-sandbox, the RuntimeClass and RBAC, by
// kubernetes.Doctor. Docker is not looked for. It reports whether every
// check passed.
func diagnoseKubernetes(ctx context.Context, cfg *config.Config, r *report, problem func(string, ...any)) bool {
	r.Kubernetes = kubernetes.Doctor(ctx, kubernetesConfig(cfg), slog.New(slog.DiscardHandler))
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
	fmt.Fprintf(w, "  context:   %s (cluster %s, %s)\n", clean1(k.Context), clean1(k.Cluster), clean1(k.Server))
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
