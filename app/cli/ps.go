package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

func init() {
	register(command{name: "ps", summary: "list every managed sandbox (any owner) with its usage", run: runPS})
}

func runPS(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "ps", "[--json] [--pool]")
	asJSON := fs.Bool("json", false, "print JSON")
	pool := fs.Bool("pool", false, "include warm-pool containers")
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
	l.Pool = *pool
	infos, err := l.List(ctx)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	if *asJSON {
		if infos == nil {
			infos = []sandbox.Info{}
		}
		b, _ := json.MarshalIndent(map[string]any{"sandboxes": infos}, "", "  ")
		fmt.Fprintln(e.Stdout, string(b))
		return 0
	}
	if len(infos) == 0 {
		fmt.Fprintln(e.Stdout, "No sandboxes.")
		return 0
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCLIENT\tLANGUAGE\tIMAGE\tAGE\tCPU\tMEMORY\tPIDS\tNETWORK\tEXPIRES")
	for _, in := range infos {
		client := in.Client
		if client == "" {
			client = "-"
		}
		if in.Pool {
			client = "(pool)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f%%\t%.0f/%d MB\t%d/%d\t%s\t%s\n",
			in.ID, client, in.Language, in.Image, time.Since(in.CreatedAt).Round(time.Second),
			in.Usage.CPUPercent, float64(in.Usage.MemoryBytes)/(1<<20), in.Limits.MemoryMB,
			in.Usage.Pids, in.Limits.Pids, in.Network, until(in.ExpiresAt))
	}
	tw.Flush()
	return 0
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
