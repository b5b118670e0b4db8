package cli

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"golang.org/x/term"
)

func init() {
	register(command{name: "stop", summary: "stop this installation's sandboxes by id, or all of them (--all)", run: runStop})
}

func runStop(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "stop", "ID... | --all [--all-users [--yes]] | --pool")
	all := fs.Bool("all", false, "stop every sandbox of this installation, whichever of its servers made it (warm-pool ones too)")
	allUsers := fs.Bool("all-users", false, "also stop other installations' sandboxes (other users', or servers with another state directory); asks first")
	yes := fs.Bool("yes", false, "with --all-users: do not ask (for scripts)")
	pool := fs.Bool("pool", false, "on Kubernetes: remove the namespace's warm pools (which outlive every server) and their unclaimed sandboxes")
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	ids := fs.Args()
	if *pool && (*all || len(ids) > 0 || *allUsers) {
		fs.Usage()
		return 2
	}
	if *pool {
		return stopPools(ctx, e)
	}
	if *all == (len(ids) > 0) || (*yes && !*allUsers) {
		fs.Usage()
		return 2
	}
	s, err := newSetup(ctx, e, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	defer s.close()
	l := s.lister(false)
	l.Pool, l.All = true, true
	infos, err := l.List(ctx)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	ids, others, left := stopTargets(infos, ids, *all, *allUsers)
	if others > 0 && !confirmOthers(e, others, *yes) {
		return 1
	}
	code := 0
	for _, id := range ids {
		if _, err := inventory.Stop(ctx, s.backend, s.state, inventory.StopRequest{ID: id, AllUsers: *allUsers}); err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
			code = 1
			continue
		}
		fmt.Fprintf(e.Stdout, "stopped %s\n", id)
	}
	if *all && s.kube != nil {
		if pools, err := s.kube.ListPools(ctx); err == nil && len(pools) > 0 {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: left %d warm pools (%s): `mcp-sandbox stop --pool` removes them\n", len(pools), poolCost(pools))
		}
	}
	if left > 0 {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: left %d sandboxes of other installations (other users', or servers with another state directory): `mcp-sandbox ps --all` shows them, `mcp-sandbox stop --all --all-users` stops them\n", left)
	}
	return code
}

// stopTargets picks what a stop acts on: the ids asked for (each checked
// again by inventory.Stop), or with all this installation's
// sandboxes and, with allUsers, everyone's. It counts the others' it will
// stop (which need a confirmation) and those --all leaves.
func stopTargets(infos []inventory.Info, ids []string, all, allUsers bool) (targets []string, others, left int) {
	if !all {
		for _, id := range ids {
			for _, in := range infos {
				if in.ID == id && !in.Mine && allUsers {
					others++
				}
			}
		}
		return ids, others, 0
	}
	for _, in := range infos {
		switch {
		case in.Mine:
			targets = append(targets, in.ID)
		case allUsers:
			targets = append(targets, in.ID)
			others++
		default:
			left++
		}
	}
	return targets, others, left
}

// confirmOthers asks before stopping n sandboxes of other installations:
// --yes answers for a script; a terminal is asked (y/N); without either
// nothing is stopped.
func confirmOthers(e *Env, n int, yes bool) bool {
	if yes {
		return true
	}
	what := fmt.Sprintf("%d sandboxes of other MCP Sandbox installations (other users', or servers with another state directory; someone may be working in them)", n)
	if !e.interactive() {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: not stopping %s: --all-users needs a confirmation; run it in a terminal, or add --yes\n", what)
		return false
	}
	fmt.Fprintf(e.Stderr, "Stop %s? [y/N] ", what)
	line, _ := bufio.NewReader(e.Stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	fmt.Fprintln(e.Stderr, "mcp-sandbox: nothing stopped")
	return false
}

// interactive reports whether the command can ask its user: stdin is a
// terminal (Env.Interactive in tests).
func (e *Env) interactive() bool {
	if e.Interactive != nil {
		return e.Interactive()
	}
	// A character device is not enough: /dev/null is one.
	f, ok := e.Stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stopPools removes the Kubernetes namespace's warm pools (stop --pool).
func stopPools(ctx context.Context, e *Env) int {
	s, err := newSetup(ctx, e, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	defer s.close()
	if s.kube == nil {
		fmt.Fprintln(e.Stderr, "mcp-sandbox: stop --pool is for backend.kind = \"kubernetes\": on Docker, `mcp-sandbox stop --all` removes the pool's containers")
		return 2
	}
	gone, err := s.kube.DeletePools(ctx)
	for _, name := range gone {
		fmt.Fprintf(e.Stdout, "removed warm pool %s\n", clean1(name))
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	if len(gone) == 0 {
		fmt.Fprintln(e.Stdout, "No warm pools.")
	}
	return 0
}
