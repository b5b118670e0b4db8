package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/kubeconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

func init() {
	register(command{name: "kube-config", summary: "as a cluster admin: write a kubeconfig for a team's ServiceAccount, from a token", run: runKubeConfig})
}

// runKubeConfig writes the kubeconfig a platform team hands a team: the
// ServiceAccount of docs/kubernetes.md's recipe, with a token the cluster
// issues, for the cluster the config's [kubernetes] table reaches (the
// admin's kubeconfig).
func runKubeConfig(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "kube-config", "--namespace NS [--service-account SA] [--duration DURATION] [--out FILE]")
	ns := fs.String("namespace", "", "the team's namespace (the recipe's, applied)")
	sa := fs.String("service-account", "mcp-sandbox", "the ServiceAccount the token is for")
	ttl := fs.Duration("duration", 7*24*time.Hour, "how long the token is valid (the cluster may cap it)")
	out := fs.String("out", "", "write the kubeconfig to this file (mode 0600) instead of stdout")
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	if *ns == "" || *ttl < 10*time.Minute {
		fmt.Fprintln(e.Stderr, "mcp-sandbox: kube-config needs --namespace, and a --duration of 10m or more")
		fs.Usage()
		return 2
	}
	cfg, err := config.Load(e.configPath())
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	b, err := kubeconn.Open(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	kc, err := b.TeamKubeconfig(ctx, *ns, *sa, *ttl)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	if *out == "" {
		_, _ = e.Stdout.Write(kc)
		return 0
	}
	if err := os.WriteFile(*out, kc, 0o600); err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	fmt.Fprintf(e.Stderr, "wrote %s: set kubernetes.kubeconfig to it and kubernetes.namespace = %q\n", *out, *ns)
	return 0
}
