package clientconfig

import (
	"fmt"
	"slices"
	"sort"
)

// ServerName is the name of our entry in every client's config.
const ServerName = "mcp-sandbox"

// Entry is how a client starts an MCP server over stdio.
type Entry struct {
	// Command is the program the client runs.
	Command string `json:"command"`
	// Args are its arguments.
	Args []string `json:"args"`
	// Env holds variables the client sets on top of the environment it
	// passes anyway.
	Env map[string]string `json:"env,omitempty"`
}

// ownedEnv are the variables Install manages inside the entry's env: it sets
// them when given and removes them when not. Any other variable a person
// added to the entry is theirs and stays.
var ownedEnv = []string{"DOCKER_HOST"}

// conflicting are keys that would make a client treat our entry as a remote
// server instead of running the command; Install removes them.
var conflicting = []string{"url", "serverUrl", "httpUrl"}

// field is one member of a config object, in the order it is written. val
// is a string, a []string, or a []field (a nested object).
type field struct {
	key string
	val any
}

// wantEntry is the entry Install writes for the given server binary.
func wantEntry(command, dockerHost string) Entry {
	e := Entry{Command: command, Args: []string{"serve"}}
	if dockerHost != "" {
		e.Env = map[string]string{"DOCKER_HOST": dockerHost}
	}
	return e
}

// envKeys lists the variables Install decides on: the owned ones and any
// the caller asked for, sorted.
func (e Entry) envKeys() []string {
	keys := slices.Clone(ownedEnv)
	for k := range e.Env {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// entryFields is the entry as ordered fields: the client's fixed fields
// first, then command, args and (when set) env.
func entryFields(fixed []field, e Entry) []field {
	fs := slices.Clone(fixed)
	fs = append(fs, field{"command", e.Command}, field{"args", argsOf(e)})
	if len(e.Env) > 0 {
		fs = append(fs, field{"env", envFields(e.Env)})
	}
	return fs
}

func argsOf(e Entry) []string {
	if e.Args == nil {
		return []string{}
	}
	return e.Args
}

func envFields(env map[string]string) []field {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fs := make([]field, 0, len(keys))
	for _, k := range keys {
		fs = append(fs, field{k, env[k]})
	}
	return fs
}

// entryFromRaw reads an entry from its decoded form, skipping values of the
// wrong type.
func entryFromRaw(raw map[string]any) *Entry {
	if raw == nil {
		return nil
	}
	e := &Entry{}
	e.Command, _ = raw["command"].(string)
	e.Args, _ = stringsOf(raw["args"])
	if env, ok := raw["env"].(map[string]any); ok && len(env) > 0 {
		e.Env = make(map[string]string, len(env))
		for k, v := range env {
			if s, ok := v.(string); ok {
				e.Env[k] = s
			}
		}
	}
	return e
}

func stringsOf(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// differences lists, in words, how the decoded entry raw differs from what
// Install would write. An empty list means Install has nothing to do.
func differences(raw map[string]any, fixed []field, want Entry) []string {
	if raw == nil {
		return []string{"no " + ServerName + " entry"}
	}
	var d []string
	for _, f := range fixed {
		d = append(d, differString(raw, f.key, f.val.(string))...)
	}
	d = append(d, differString(raw, "command", want.Command)...)
	if got, ok := stringsOf(raw["args"]); !ok {
		d = append(d, fmt.Sprintf("args is %s, want %q", describe(raw["args"]), argsOf(want)))
	} else if !slices.Equal(got, argsOf(want)) {
		d = append(d, fmt.Sprintf("args is %q, want %q", got, argsOf(want)))
	}
	env, isMap := raw["env"].(map[string]any)
	if _, has := raw["env"]; has && !isMap {
		d = append(d, "env is "+describe(raw["env"])+", want an object")
	}
	for _, k := range want.envKeys() {
		got, has := env[k]
		w, wants := want.Env[k]
		switch {
		case wants && !has:
			d = append(d, fmt.Sprintf("env %s is missing, want %q", k, w))
		case wants && got != w:
			d = append(d, fmt.Sprintf("env %s is %s, want %q", k, describe(got), w))
		case !wants && has:
			d = append(d, fmt.Sprintf("env %s is %s, want it unset", k, describe(got)))
		}
	}
	for _, k := range conflicting {
		if _, has := raw[k]; has {
			d = append(d, fmt.Sprintf("has %q, which makes the client ignore command", k))
		}
	}
	return d
}

func differString(raw map[string]any, key, want string) []string {
	v, has := raw[key]
	switch {
	case !has:
		return []string{fmt.Sprintf("%s is missing, want %q", key, want)}
	case v != want:
		return []string{fmt.Sprintf("%s is %s, want %q", key, describe(v), want)}
	}
	return nil
}

// describe shows a decoded value briefly, for messages.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "missing"
	case string:
		return fmt.Sprintf("%q", v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%v", v)
	}
}
