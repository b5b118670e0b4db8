package clientconfig

import (
	"fmt"
	"slices"
)

// Client is one AI client whose MCP configuration this package edits.
// The registry holds one per supported client; get them with Lookup or
// Clients.
type Client struct {
	name    string
	display string
	format  format
	// path returns the config file the client reads our entry from.
	path func(Env) (string, error)
	// signs returns places whose existence shows the client is installed:
	// its config directory, its application bundle or install directory.
	signs func(Env) []string
	// commands are programs on PATH that show it is installed.
	commands []string
}

// format reads and edits one kind of config file. Every method takes the
// whole file and returns it whole; nil or blank input means no file yet.
type format interface {
	// fixedFields are fields every entry of the client carries, such as
	// "type": "stdio".
	fixedFields() []field
	// read returns our entry as decoded, or nil when there is none.
	read(src []byte) (map[string]any, error)
	// install returns src with our entry set to want; the same bytes when
	// it already is.
	install(src []byte, want Entry) ([]byte, error)
	// uninstall returns src without our entry.
	uninstall(src []byte) ([]byte, error)
}

// Name is the client's name on the command line, such as "claude" or
// "claude-code".
func (c *Client) Name() string { return c.name }

// DisplayName is the client's name for people, such as "Claude Desktop".
func (c *Client) DisplayName() string { return c.display }

// ConfigPath returns the config file that holds the client's MCP servers,
// whether or not it exists.
func (c *Client) ConfigPath(env Env) (string, error) {
	p, err := c.path(env)
	if err != nil {
		return "", fmt.Errorf("%s config path: %w", c.name, err)
	}
	return p, nil
}

// Installed reports whether the client looks installed. The heuristic is
// cheap and errs towards yes: the config file or directory exists, or the
// application is where its installer puts it (macOS /Applications, Windows
// %LOCALAPPDATA%\Programs and the like), or its command is on PATH.
func (c *Client) Installed(env Env) bool {
	if p, err := c.ConfigPath(env); err == nil && exists(p) {
		return true
	}
	if c.signs != nil {
		for _, s := range c.signs(env) {
			if s != "" && exists(s) {
				return true
			}
		}
	}
	for _, cmd := range c.commands {
		if env.lookPath(cmd) != "" {
			return true
		}
	}
	return false
}

// registry lists the supported clients in the order people see them.
var registry = []*Client{
	claudeDesktop,
	cursor,
	vscode,
	windsurf,
	claudeCode,
	gemini,
	lmStudio,
	zed,
	codex,
}

// Clients returns every supported client.
func Clients() []*Client { return slices.Clone(registry) }

// Names returns the names of every supported client.
func Names() []string {
	names := make([]string, len(registry))
	for i, c := range registry {
		names[i] = c.name
	}
	return names
}

// Lookup returns the client called name; the error wraps ErrUnknownClient.
func Lookup(name string) (*Client, error) {
	for _, c := range registry {
		if c.name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknownClient, name, Names())
}

// macApps lists where macOS keeps the named application bundles.
func (e Env) macApps(bundles ...string) []string {
	if e.goos() != "darwin" {
		return nil
	}
	var out []string
	for _, b := range bundles {
		out = append(out, "/Applications/"+b)
		if p, err := e.fromHome("Applications", b); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// winPrograms lists the per-user install directories Windows installers
// use under %LOCALAPPDATA%\Programs.
func (e Env) winPrograms(dirs ...string) []string {
	if e.goos() != "windows" {
		return nil
	}
	local, err := e.localAppData()
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range dirs {
		out = append(out, e.join(local, "Programs", d))
	}
	return out
}
