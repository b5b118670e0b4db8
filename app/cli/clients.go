package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/installplace"
)

func init() {
	register(command{name: "clients", summary: "list, install, uninstall or verify the MCP entry in AI clients' configs", run: runClients})
}

// detectDockerHost picks the DOCKER_HOST written into client configs when
// --docker-host is not given. The doctor's detection is wired in here.
var detectDockerHost = func(ctx context.Context, e *Env) string {
	return e.getenv("DOCKER_HOST")
}

// serverExecutable returns the mcp-sandbox binary that clients should run:
// the file named mcp-sandbox beside this program, links resolved, so that a
// config keeps working from wherever the client starts. Tests replace it.
var serverExecutable = func() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", fmt.Errorf("find this program: %w", err)
	}
	name := "mcp-sandbox"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("no %s beside %s to point clients at", name, exe)
	}
	return p, nil
}

// clientsFlags are the flags every clients subcommand accepts.
type clientsFlags struct {
	client     string
	all        bool
	dryRun     bool
	asJSON     bool
	force      bool
	dockerHost string
	timeout    time.Duration
	ifCommand  string
}

const clientsSynopsis = "[list|install|uninstall|verify] [--client NAME|--all] [--dry-run] [--json] [--docker-host HOST] [--force] [--timeout DURATION] [--if-command PATH]"

func runClients(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "clients", clientsSynopsis)
	var f clientsFlags
	fs.StringVar(&f.client, "client", "", "the client `NAME`: "+strings.Join(clientconfig.Names(), ", "))
	fs.BoolVar(&f.all, "all", false, "every client (install: those that look installed; verify: those configured)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "show the change as a diff and write nothing")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	fs.BoolVar(&f.force, "force", false, "install even when the client does not look installed")
	fs.StringVar(&f.dockerHost, "docker-host", "", "the DOCKER_HOST to write into the entry, as a `HOST` URL (default: detected)")
	fs.DurationVar(&f.timeout, "timeout", clientconfig.DefaultVerifyTimeout, "how long verify waits for the server, as a `DURATION` such as 30s")
	fs.StringVar(&f.ifCommand, "if-command", "", "uninstall: remove only entries that run the program `PATH` (an uninstaller's own); others stay as they are")
	// The subcommand may come before or after the flags.
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	sub := "list"
	if rest := fs.Args(); len(rest) > 0 {
		sub = rest[0]
		if code, done := parseFlags(e, fs, rest[1:]); done {
			return code
		}
		if fs.NArg() > 0 {
			return clientsUsage(e, fs, "unexpected argument %q", fs.Arg(0))
		}
	}
	if f.client != "" && f.all {
		return clientsUsage(e, fs, "give --client or --all, not both")
	}
	if f.ifCommand != "" && (sub != "uninstall" || !filepath.IsAbs(f.ifCommand)) {
		return clientsUsage(e, fs, "--if-command takes an absolute path, and only with uninstall")
	}
	var selected []*clientconfig.Client
	switch {
	case f.client != "":
		c, err := clientconfig.Lookup(f.client)
		if err != nil {
			return clientsUsage(e, fs, "%v", err)
		}
		selected = []*clientconfig.Client{c}
	case f.all || sub == "list":
		selected = clientconfig.Clients()
	default:
		return clientsUsage(e, fs, "%s needs --client NAME or --all", sub)
	}
	env := clientconfig.Env{GOOS: runtime.GOOS, Getenv: e.getenv}
	switch sub {
	case "list":
		return clientsList(ctx, e, env, f, selected)
	case "install", "uninstall":
		return clientsEdit(ctx, e, env, f, sub, selected)
	case "verify":
		return clientsVerify(ctx, e, env, f, selected)
	}
	return clientsUsage(e, fs, "unknown subcommand %q", sub)
}

func clientsUsage(e *Env, fs *flag.FlagSet, format string, a ...any) int {
	fmt.Fprintf(e.Stderr, "mcp-sandbox clients: "+format+"\n", a...)
	fs.Usage()
	return 2
}

// want is what install writes: the server binary and DOCKER_HOST.
func (f clientsFlags) want(ctx context.Context, e *Env) (command, dockerHost string, err error) {
	command, err = serverExecutable()
	if p := installplace.Here(command); err == nil && p.Transient() && !f.force {
		err = fmt.Errorf("%s (or write the entry anyway with --force)", p.Message())
	}
	dockerHost = f.dockerHost
	if dockerHost == "" {
		dockerHost = detectDockerHost(ctx, e)
	}
	return command, dockerHost, err
}

// listedClient is one client in `clients list --json`.
type listedClient struct {
	*clientconfig.Status
	Error string `json:"error,omitempty"`
}

func clientsList(ctx context.Context, e *Env, env clientconfig.Env, f clientsFlags, selected []*clientconfig.Client) int {
	command, dockerHost, _ := f.want(ctx, e) // without a binary, entries are listed but not compared
	var out []listedClient
	for _, c := range selected {
		st, err := c.Status(clientconfig.StatusOptions{Env: env, Command: command, DockerHost: dockerHost})
		lc := listedClient{Status: st}
		if err != nil {
			lc.Error = err.Error()
		}
		out = append(out, lc)
	}
	if f.asJSON {
		return printJSON(e.Stdout, map[string]any{"clients": out}, 0)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tINSTALLED\tCONFIGURED\tUP TO DATE\tCONFIG FILE")
	var notes []string
	for _, lc := range out {
		upToDate := "-"
		if lc.Configured && command != "" {
			upToDate = yesNo(lc.Matches)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", lc.Client, yesNo(lc.Installed), yesNo(lc.Configured), upToDate, lc.Path)
		if lc.Error != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", lc.Client, strings.TrimPrefix(lc.Error, "status "+lc.Client+": ")))
		}
		if lc.Configured && !lc.Matches && len(lc.Differences) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %s (run: mcp-sandbox clients install --client %s)", lc.Client, strings.Join(lc.Differences, "; "), lc.Client))
		}
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(e.Stdout, "  "+n)
	}
	return 0
}

// editedClient is one client in `clients install|uninstall --json`.
type editedClient struct {
	*clientconfig.Result
	Client  string `json:"client"`
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

func clientsEdit(ctx context.Context, e *Env, env clientconfig.Env, f clientsFlags, verb string, selected []*clientconfig.Client) int {
	var command, dockerHost string
	if verb == "install" {
		var err error
		if command, dockerHost, err = f.want(ctx, e); err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
			return 1
		}
	}
	code := 0
	var out []editedClient
	for _, c := range selected {
		ec := editedClient{Client: c.Name()}
		var err error
		switch {
		case verb == "install" && f.all && !f.force && !c.Installed(env):
			ec.Skipped = "does not look installed"
		case verb == "install":
			ec.Result, err = c.Install(ctx, clientconfig.InstallOptions{Env: env, Command: command, DockerHost: dockerHost, DryRun: f.dryRun, Force: f.force})
		default:
			opts := clientconfig.UninstallOptions{Env: env, DryRun: f.dryRun}
			if f.ifCommand != "" {
				opts.Only = func(en clientconfig.Entry) bool { return sameProgram(en.Command, f.ifCommand) }
			}
			ec.Result, err = c.Uninstall(ctx, opts)
		}
		if err != nil {
			ec.Error, code = err.Error(), 1
			if errors.Is(err, clientconfig.ErrNotInstalled) {
				ec.Error += "; use --force to write its config anyway"
			}
		}
		out = append(out, ec)
	}
	if f.asJSON {
		return printJSON(e.Stdout, map[string]any{"clients": out}, code)
	}
	for _, ec := range out {
		printEdited(e, verb, ec)
	}
	return code
}

func printEdited(e *Env, verb string, ec editedClient) {
	r := ec.Result
	switch {
	case ec.Error != "":
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %s\n", ec.Error)
	case ec.Skipped != "":
		fmt.Fprintf(e.Stdout, "%s: skipped, %s\n", ec.Client, ec.Skipped)
	case r.Diff != "":
		fmt.Fprint(e.Stdout, r.Diff)
	case r.Kept != nil:
		fmt.Fprintf(e.Stdout, "%s: left the %s entry in %s as it is: it runs %s\n", ec.Client, clientconfig.ServerName, r.Path, r.Kept.Command)
	case !r.Changed && verb == "install":
		fmt.Fprintf(e.Stdout, "%s: already configured in %s\n", ec.Client, r.Path)
	case !r.Changed:
		fmt.Fprintf(e.Stdout, "%s: no %s entry in %s\n", ec.Client, clientconfig.ServerName, r.Path)
	default:
		fmt.Fprintf(e.Stdout, "%s: %s %s", ec.Client, map[string]string{"install": "configured", "uninstall": "removed the entry from"}[verb], r.Path)
		if r.RealPath != "" {
			fmt.Fprintf(e.Stdout, " (a link; wrote %s)", r.RealPath)
		}
		if r.Backup != "" {
			fmt.Fprintf(e.Stdout, ", backup %s", r.Backup)
		}
		fmt.Fprintln(e.Stdout)
	}
}

// sameProgram reports whether an entry's command runs the program want:
// the same path, or another name of the same file while it exists.
func sameProgram(command, want string) bool {
	if command == "" {
		return false
	}
	if filepath.Clean(command) == filepath.Clean(want) {
		return true
	}
	a, err1 := os.Stat(command)
	b, err2 := os.Stat(want)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// verifiedClient is one client in `clients verify --json`.
type verifiedClient struct {
	*clientconfig.VerifyResult
	Client string `json:"client"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
}

func clientsVerify(ctx context.Context, e *Env, env clientconfig.Env, f clientsFlags, selected []*clientconfig.Client) int {
	code := 0
	var out []verifiedClient
	for _, c := range selected {
		if f.all {
			if st, err := c.Status(clientconfig.StatusOptions{Env: env}); err == nil && !st.Configured {
				continue
			}
		}
		res, err := c.Verify(ctx, clientconfig.VerifyOptions{Env: env, Timeout: f.timeout})
		vc := verifiedClient{VerifyResult: res, Client: c.Name(), OK: err == nil}
		if err != nil {
			vc.Error, code = err.Error(), 1
		}
		out = append(out, vc)
	}
	if f.asJSON {
		return printJSON(e.Stdout, map[string]any{"clients": out}, code)
	}
	if len(out) == 0 {
		fmt.Fprintln(e.Stdout, "No client has an "+clientconfig.ServerName+" entry.")
	}
	for _, vc := range out {
		if !vc.OK {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %s\n", vc.Error)
			continue
		}
		r := vc.VerifyResult
		fmt.Fprintf(e.Stdout, "%s: ok, %s %s (protocol %s), %d tools, started in %v, tools/list in %v\n",
			vc.Client, r.ServerName, r.ServerVersion, r.ProtocolVersion, r.Tools,
			r.Startup.Round(time.Millisecond), r.RoundTrip.Round(time.Microsecond))
	}
	return code
}

func printJSON(w io.Writer, v any, code int) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(w, "mcp-sandbox: %v\n", err)
		return 1
	}
	fmt.Fprintln(w, string(b))
	return code
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
