package firstrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/installplace"
)

// DefaultClients are configured on first run when installed.
var DefaultClients = []string{"claude", "cursor"}

// markerName is the file in the state directory that says the first run
// happened.
const markerName = "tray-first-run"

// Options says what the first run writes.
type Options struct {
	// Env locates the clients' config files.
	Env clientconfig.Env
	// Command is the absolute path of the bundled server.
	Command string
	// DockerHost is written into each entry's env when set.
	DockerHost string
	// StateDir holds the marker; the first run happens once per state dir.
	StateDir string
	// Clients overrides DefaultClients.
	Clients []string
	// Place is where Command runs from; the zero Place is one that stays.
	// The tray passes installplace.Here(Command).
	Place installplace.Place
}

// Configured is a client the first run wrote.
type Configured struct {
	Client, Display, Path string
	// Backup is the copy of the file made before writing, if it existed.
	Backup string
}

// Report is what the first run did.
type Report struct {
	// AlreadyDone is set when an earlier start did the first run.
	AlreadyDone bool
	// NotHere is set, and nothing was written, when the program runs from a
	// place it will not stay in (macOS: the disk image, an App
	// Translocation copy). The first run happens at the next start from
	// elsewhere; the tray offers installplace.MoveToApplications.
	NotHere    *installplace.Place
	Configured []Configured
	// Skipped lists clients that are not installed.
	Skipped []string
	// Failed maps a client to why its config could not be written (the
	// file does not parse, is read-only, …); the file is left as it was.
	Failed map[string]error
}

// Run configures the default clients that are installed, once: it leaves
// a marker in the state directory and does nothing when the marker is
// there. A client whose config cannot be written is reported in Failed and
// does not stop the others.
func Run(ctx context.Context, o Options) (Report, error) {
	var rep Report
	marker := filepath.Join(o.StateDir, markerName)
	if _, err := os.Stat(marker); err == nil {
		rep.AlreadyDone = true
		return rep, nil
	}
	if o.Place.Transient() {
		p := o.Place
		rep.NotHere = &p
		return rep, nil
	}
	names := o.Clients
	if names == nil {
		names = DefaultClients
	}
	for _, name := range names {
		c, err := clientconfig.Lookup(name)
		if err != nil {
			return rep, err
		}
		if !c.Installed(o.Env) {
			rep.Skipped = append(rep.Skipped, name)
			continue
		}
		res, err := c.Install(ctx, clientconfig.InstallOptions{Env: o.Env, Command: o.Command, DockerHost: o.DockerHost})
		if err != nil {
			if rep.Failed == nil {
				rep.Failed = map[string]error{}
			}
			rep.Failed[name] = err
			continue
		}
		rep.Configured = append(rep.Configured, Configured{Client: name, Display: c.DisplayName(), Path: res.Path, Backup: res.Backup})
	}
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return rep, fmt.Errorf("first run: %w", err)
	}
	if err := os.WriteFile(marker, []byte("the tray's first run configured: "+rep.names()+"\n"), 0o600); err != nil {
		return rep, fmt.Errorf("first run: %w", err)
	}
	return rep, nil
}

func (r Report) names() string {
	var n []string
	for _, c := range r.Configured {
		n = append(n, c.Display)
	}
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

// Message is the notification for the first run, or "" when it changed
// nothing worth telling.
func (r Report) Message() string {
	if r.NotHere != nil {
		return r.NotHere.Message() + " No AI client was set up yet."
	}
	var parts []string
	if len(r.Configured) > 0 {
		names := make([]string, len(r.Configured))
		var backedUp []string
		for i, c := range r.Configured {
			names[i] = c.Display
			if c.Backup != "" {
				backedUp = append(backedUp, c.Display)
			}
		}
		list := joinAnd(names)
		note := ""
		switch {
		case len(backedUp) == len(names) && len(names) == 1:
			note = " (the old config was backed up)"
		case len(backedUp) == len(names):
			note = " (the old configs were backed up)"
		case len(backedUp) > 0:
			note = " (the old config of " + joinAnd(backedUp) + " was backed up)"
		}
		parts = append(parts, fmt.Sprintf("MCP Sandbox is now set up in %s%s. Restart %s to load it.", list, note, list))
	}
	for _, name := range slices.Sorted(maps.Keys(r.Failed)) {
		err := r.Failed[name]
		display := name
		if c, lerr := clientconfig.Lookup(name); lerr == nil {
			display = c.DisplayName()
		}
		why := "see the Clients tab"
		if errors.Is(err, clientconfig.ErrParse) {
			why = "its config file does not parse; it was left as it was"
		}
		parts = append(parts, fmt.Sprintf("%s was not set up: %s.", display, why))
	}
	return strings.Join(parts, " ")
}

func joinAnd(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
