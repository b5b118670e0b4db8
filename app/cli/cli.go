package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/backendrpc"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/server"
)

// Env is what a command may touch of the outside world. Tests fill it with
// buffers and a fake environment; main fills it with the process's own.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable; nil means os.Getenv.
	Getenv func(string) string
	// ConfigPath is the config file a --config flag named; empty means
	// config.Path() ($MCP_SANDBOX_CONFIG, else the user's config dir).
	ConfigPath string
	// Interactive reports whether a person can be asked (a confirmation
	// on Stdin); nil means Stdin is a terminal.
	Interactive func() bool
}

// configPath is the config file the command uses: --config wins over
// $MCP_SANDBOX_CONFIG, which wins over the default place.
func (e *Env) configPath() string {
	if e.ConfigPath != "" {
		return e.ConfigPath
	}
	return config.Path()
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
	case "-h", "--help":
		usage(e.Stdout)
		return 0
	case "help":
		// help CMD is CMD --help, as with docker, kubectl and go.
		if len(args) < 2 {
			usage(e.Stdout)
			return 0
		}
		name, args = args[1], []string{args[1], "--help"}
	case "-v", "--version":
		name = "version"
	}
	switch name {
	case server.WatchdogCommand:
		return runWatchdog(ctx, e, args[1:])
	case backendrpc.Command:
		return runBackendServe(ctx, e, args[1:])
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
	b.WriteString("\nRun 'mcp-sandbox <command> --help' (or 'mcp-sandbox help <command>') for a command's flags.\n")
	io.WriteString(w, b.String())
}

// newFlagSet returns a flag set that returns errors instead of exiting, so
// commands stay testable. Its Usage prints the synopsis and the flags (as
// --flag) to e.Stderr, for a command that finds its arguments wrong;
// parseFlags prints the same to e.Stdout when help was asked for.
func newFlagSet(e *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() { printUsage(fs.Output(), fs, synopsis) }
	return fs
}

// printUsage writes a command's synopsis and its flags, each as --flag
// with the kind of value it takes, the way Docker and kubectl show them.
func printUsage(w io.Writer, fs *flag.FlagSet, synopsis string) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: mcp-sandbox %s %s\n", fs.Name(), synopsis)
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			b.WriteString("\nFlags:\n")
			first = false
		}
		kind, text := flag.UnquoteUsage(f)
		if _, ok := f.Value.(interface{ IsBoolFlag() bool }); ok {
			kind = ""
		}
		fmt.Fprintf(&b, "  --%s", f.Name)
		if kind != "" {
			b.WriteString(" " + kind)
		}
		b.WriteString("\n      " + text)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	})
	io.WriteString(w, b.String())
}

// parseFlags parses args and reports the exit code to return when parsing
// ended the command: help asked for (-h, --help) prints the usage to
// stdout and gives 0; a bad flag prints the error and the usage to stderr
// and gives badFlag (2 for most commands, 125 for run, as docker run does).
func parseFlags(e *Env, fs *flag.FlagSet, args []string) (code int, done bool) {
	return parseFlagsExit(e, fs, args, 2)
}

func parseFlagsExit(e *Env, fs *flag.FlagSet, args []string, badFlag int) (code int, done bool) {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(e.Stdout)
		fs.Usage()
		fs.SetOutput(out)
		return 0, true
	default:
		// The flag package names flags with one dash; say them as the
		// usage does.
		fmt.Fprintf(out, "mcp-sandbox %s: %s\n", fs.Name(), singleDash.ReplaceAllString(err.Error(), "$1--$2"))
		fs.Usage()
		return badFlag, true
	}
}

// singleDash finds a flag named with one dash in the flag package's errors
// ("flag provided but not defined: -x", "invalid value … for flag -timeout").
var singleDash = regexp.MustCompile(`(^|\s)-([a-zA-Z])`)
