package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

func init() {
	register(command{name: "ps", summary: "list this installation's sandboxes with their usage (--all: every user's, marked)", run: runPS})
}

func runPS(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "ps", "[--json] [--pool] [--all]")
	asJSON := fs.Bool("json", false, "print JSON")
	pool := fs.Bool("pool", false, "include warm-pool containers")
	all := fs.Bool("all", false, "also list other installations' sandboxes on the engine (other users', or servers with another state directory), marked as others'")
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	s, err := newSetup(ctx, e, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	defer s.close()
	l := s.lister(true)
	l.Pool, l.All = *pool, *all
	infos, err := l.List(ctx)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	where := placeOf(s)
	if where != nil {
		if where.Pools, err = s.kube.ListPools(ctx); err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		writePSJSON(e.Stdout, infos, where)
		return 0
	}
	if where != nil {
		fmt.Fprintf(e.Stdout, "Kubernetes: cluster %s, namespace %s\n", clean1(where.Cluster), clean1(where.Namespace))
	}
	writePS(e.Stdout, infos, *all)
	if where != nil {
		writePools(e.Stdout, where.Pools)
	}
	return 0
}

// writePools prints the namespace's warm pools and what they hold on the
// nodes, and how to remove them: they outlive every server.
func writePools(w io.Writer, pools []kubernetes.PoolInfo) {
	if len(pools) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWarm pools (%s; `mcp-sandbox stop --pool` removes them):\n", poolCost(pools))
	for _, p := range pools {
		fmt.Fprintf(w, "  %s  %s  %d of %d ready  requests %dm CPU, %d MiB\n", clean1(p.Name), clean1(p.Language), p.Ready, p.Replicas, p.CPUMillis, p.MemoryBytes>>20)
	}
}

// poolCost is what the pools request in all, for a person.
func poolCost(pools []kubernetes.PoolInfo) string {
	var cpu, mem int64
	n := 0
	for _, p := range pools {
		cpu, mem, n = cpu+p.CPUMillis, mem+p.MemoryBytes, n+p.Replicas
	}
	return fmt.Sprintf("%d sandboxes requesting %dm CPU and %d MiB", n, cpu, mem>>20)
}

// place is where a Kubernetes backend's sandboxes are, for ps.
type place struct {
	Cluster, Namespace string
	Pools              []kubernetes.PoolInfo
}

// placeOf is the set-up's cluster and namespace; nil on Docker.
func placeOf(s *setup) *place {
	if s.kube == nil {
		return nil
	}
	return &place{Cluster: s.kube.Cluster(), Namespace: s.kube.Namespace()}
}

// writePSJSON prints ps --json: {"sandboxes": [...]}, and on Kubernetes
// "backend": "kubernetes" with the "cluster" and "namespace".
func writePSJSON(w io.Writer, infos []inventory.Info, where *place) {
	if infos == nil {
		infos = []inventory.Info{}
	}
	out := map[string]any{"sandboxes": infos}
	if where != nil {
		out["backend"], out["cluster"], out["namespace"] = config.BackendKubernetes, where.Cluster, where.Namespace
		out["warm_pools"] = where.Pools
		if where.Pools == nil {
			out["warm_pools"] = []kubernetes.PoolInfo{}
		}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(w, string(b))
}

// writePS prints the sandboxes as a table, with a column saying whose each
// is when others' are listed. Every string in infos was cleaned where it
// entered (inventory.Lister), so no value can add a row or a column.
func writePS(w io.Writer, infos []inventory.Info, all bool) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "No sandboxes.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "ID\tCLIENT\tLANGUAGE\tIMAGE\tAGE\tCPU\tMEMORY\tPIDS\tNETWORK\tEXPIRES"
	if all {
		head += "\tINSTALLATION"
	}
	fmt.Fprintln(tw, head)
	for _, in := range infos {
		client := in.Client
		if client == "" {
			client = "-"
		}
		if in.Pool {
			client = "(pool)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f%%\t%.0f/%d MB\t%d/%d\t%s\t%s",
			in.ID, client, in.Language, in.Image, time.Since(in.CreatedAt).Round(time.Second),
			in.Usage.CPUPercent, float64(in.Usage.MemoryBytes)/(1<<20), in.Limits.MemoryMB,
			in.Usage.Pids, in.Limits.Pids, in.Network, until(in.ExpiresAt))
		if all {
			fmt.Fprintf(tw, "\t%s", whose(in))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// whose says whose a listed sandbox is.
func whose(in inventory.Info) string {
	switch {
	case in.Mine:
		return "this"
	case in.Installation == "":
		return "other's (unlabelled, an older version's)"
	default:
		return "other's (" + in.Installation[:min(8, len(in.Installation))] + ")"
	}
}

func until(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Until(t).Round(time.Second)
	if d < 0 {
		return "expired"
	}
	return "in " + d.String()
}
