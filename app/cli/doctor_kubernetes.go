package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
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
// line each. Every value the cluster sent is cleaned of control
// characters first, so none can add a line.
func printKubernetesSection(w io.Writer, k *kubernetes.Report) {
	fmt.Fprintln(w, "Kubernetes")
	fmt.Fprintf(w, "  context:   %s (cluster %s, %s)\n", clean(k.Context), clean(k.Cluster), clean(k.Server))
	fmt.Fprintf(w, "  namespace: %s\n", clean(k.Namespace))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range k.Checks {
		mark := "ok"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", mark, c.Name, clean(c.Detail))
	}
	tw.Flush()
}

// clean replaces control characters (a newline, an escape sequence) with
// spaces.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}
