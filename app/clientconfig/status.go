package clientconfig

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/filebackup"
)

// StatusOptions says which config Status reads and what it compares the
// entry with.
type StatusOptions struct {
	// Env locates the config file.
	Env Env
	// Command and DockerHost are what Install would be given; Matches is
	// worked out only when Command is set.
	Command    string
	DockerHost string
}

// Status describes a client's config as it is now.
type Status struct {
	// Client is the client's name.
	Client string `json:"client"`
	// Installed reports whether the client looks installed.
	Installed bool `json:"installed"`
	// Path is the config file.
	Path string `json:"path"`
	// RealPath is set when Path is a symbolic link: the file it points to.
	RealPath string `json:"real_path,omitempty"`
	// Exists reports whether the config file exists.
	Exists bool `json:"exists"`
	// Configured reports whether the file has an mcp-sandbox entry.
	Configured bool `json:"configured"`
	// Matches reports whether the entry is exactly what Install would
	// write. A configured entry that no longer matches (a client that
	// rewrote its file, a moved binary) is worth offering to repair.
	Matches bool `json:"matches"`
	// Differences says, in words, how the entry differs from what Install
	// would write.
	Differences []string `json:"differences,omitempty"`
	// Entry is the entry as the client reads it.
	Entry *Entry `json:"entry,omitempty"`
	// LastBackup is the newest backup of the file we made, if any.
	LastBackup string `json:"last_backup,omitempty"`
}

// Status reads the client's config and reports on our entry. When the file
// cannot be read or parsed, the error says why (a *ParseError says where)
// and the Status still carries what is known.
func (c *Client) Status(opts StatusOptions) (*Status, error) {
	st, err := c.status(opts)
	if err != nil {
		return st, fmt.Errorf("status %s: %w", c.name, err)
	}
	return st, nil
}

func (c *Client) status(opts StatusOptions) (*Status, error) {
	st := &Status{Client: c.name, Installed: c.Installed(opts.Env)}
	path, err := c.path(opts.Env)
	if err != nil {
		return st, err
	}
	st.Path = path
	real, err := resolveLink(path)
	if err != nil {
		return st, err
	}
	if real != path {
		st.RealPath = real
	}
	st.LastBackup = filebackup.Latest(real)
	src, fi, err := readConfig(real)
	if err != nil {
		return st, err
	}
	st.Exists = fi != nil
	raw, err := c.format.read(bytes.TrimPrefix(src, utf8BOM))
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.Path = real
		} else if errors.Is(err, ErrStructure) {
			err = fmt.Errorf("%s: %w", real, err)
		}
		return st, err
	}
	st.Configured = raw != nil
	st.Entry = entryFromRaw(raw)
	if opts.Command != "" && st.Configured {
		st.Differences = differences(raw, c.format.fixedFields(), wantEntry(opts.Command, opts.DockerHost))
		st.Matches = len(st.Differences) == 0
	}
	return st, nil
}

// ClientState is one client's line in `mcp-sandbox doctor --json`.
type ClientState struct {
	Name       string `json:"name"`
	Installed  bool   `json:"installed"`
	Configured bool   `json:"configured"`
	Path       string `json:"path"`
	// Error says why the config could not be read, if it could not.
	Error string `json:"error,omitempty"`
}

// Overview reports every supported client's state, for the doctor.
func Overview(env Env) []ClientState {
	out := make([]ClientState, 0, len(registry))
	for _, c := range registry {
		st, err := c.Status(StatusOptions{Env: env})
		cs := ClientState{Name: c.name, Installed: st.Installed, Configured: st.Configured, Path: st.Path}
		if err != nil {
			cs.Error = err.Error()
		}
		out = append(out, cs)
	}
	return out
}
