package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

func init() {
	register(command{name: "stop", summary: "stop a sandbox by id, or all of them (--all)", run: runStop})
}

func runStop(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "stop", "ID... | --all")
	all := fs.Bool("all", false, "stop every managed sandbox, whichever server made it (warm-pool ones too)")
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	ids := fs.Args()
	if *all == (len(ids) > 0) {
		fs.Usage()
		return 2
	}
	s, err := newSetup(ctx, e, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	defer s.close()
	if *all {
		l := s.lister(false)
		l.Pool = true
		infos, err := l.List(ctx)
		if err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
			return 1
		}
		for _, in := range infos {
			ids = append(ids, in.ID)
		}
	}
	code := 0
	for _, id := range ids {
		if err := sandbox.StopManaged(ctx, s.backend, s.state, id); err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
			code = 1
			continue
		}
		fmt.Fprintf(e.Stdout, "stopped %s\n", id)
	}
	return code
}
