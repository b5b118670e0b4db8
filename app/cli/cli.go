// Package cli implements the mcp-sandbox command line: the MCP server
// (serve) and the commands a person runs in a terminal (doctor, clients, ps,
// stop, run, version).
//
// It lives under app/ because it wires the engine (sandbox/...) to the
// client-configuration code (app/clientconfig); it never imports Fyne, so the
// server binary stays pure Go.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Env is what a command may touch of the outside world. Tests fill it with
// buffers and a fake environment; main fills it with the process's own.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable; nil means os.Getenv.
	Getenv func(string) string
}

func (e *Env) getenv(k string) string {
	if e.Getenv != nil {
		return e.Getenv(k)
	}
	return os.Getenv(k)
}

// command is one subcommand: its name, a one-line summary for the usage
// text, and the function that runs it and returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *Env, args []string) int
}

// commands lists every subcommand; each is implemented in its own file.
var commands = []command{}

func register(c command) {
	commands = append(commands, c)
	sort.Slice(commands, func(i, j int) bool { return commands[i].name < commands[j].name })
}

// Run runs the command line args (without the program name) and returns the
// exit code.
func Run(ctx context.Context, e *Env, args []string) int {
	if len(args) == 0 {
		usage(e.Stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		usage(e.Stdout)
		return 0
	case "-v", "--version":
		name = "version"
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.Stderr, "mcp-sandbox: unknown command %q\n\n", name)
	usage(e.Stderr)
	return 2
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("mcp-sandbox runs code for AI assistants in disposable, hardened Docker containers.\n\n")
	b.WriteString("Usage: mcp-sandbox <command> [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'mcp-sandbox <command> --help' for a command's flags.\n")
	io.WriteString(w, b.String())
}

// newFlagSet returns a flag set that prints its usage to e.Stderr and
// returns errors instead of exiting, so commands stay testable.
func newFlagSet(e *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.Stderr, "Usage: mcp-sandbox %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and reports the exit code to return when parsing
// ended the command (help asked for: 0; a bad flag: 2).
func parseFlags(fs *flag.FlagSet, args []string) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0, true
		}
		return 2, true
	}
	return 0, false
}
