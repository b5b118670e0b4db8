package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
)

func init() {
	register(command{name: "version", summary: "print the version and commit", run: runVersion})
}

func runVersion(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "version", "[--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	info := buildinfo.Get()
	if *asJSON {
		b, _ := json.MarshalIndent(info, "", "  ")
		fmt.Fprintln(e.Stdout, string(b))
		return 0
	}
	fmt.Fprintln(e.Stdout, "mcp-sandbox "+info.String())
	return 0
}
