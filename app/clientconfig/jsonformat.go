package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/tailscale/hujson"
)

// jsonFormat edits a JSON file, comments and trailing commas allowed, whose
// top-level object holds the servers under key.
type jsonFormat struct {
	key    string  // "mcpServers", "servers" or "context_servers"
	fixed  []field // fields every stdio entry of this client carries
	indent string  // indentation of a file we create
}

func (f jsonFormat) fixedFields() []field { return f.fixed }

// parseJSON parses src. A file holding nothing but blanks and comments is
// empty, as is a missing one.
func parseJSON(src []byte) (root hujson.Value, empty bool, err error) {
	if hujson.Extra(src).IsValid() {
		return hujson.Value{}, true, nil
	}
	root, err = hujson.Parse(src)
	if err != nil {
		return root, false, jsonParseError(err)
	}
	return root, false, nil
}

var hujsonPos = regexp.MustCompile(`^hujson: line (\d+), column (\d+): `)

func jsonParseError(err error) *ParseError {
	pe := &ParseError{Err: err}
	if m := hujsonPos.FindStringSubmatch(err.Error()); m != nil {
		pe.Line, _ = strconv.Atoi(m[1])
		pe.Column, _ = strconv.Atoi(m[2])
		pe.Err = errors.New(err.Error()[len(m[0]):])
	}
	return pe
}

func (f jsonFormat) rootObject(root *hujson.Value) (*hujson.Object, error) {
	obj := objectOf(root)
	if obj == nil {
		return nil, fmt.Errorf("%w: the top level is not an object", ErrStructure)
	}
	return obj, nil
}

func (f jsonFormat) read(src []byte) (map[string]any, error) {
	root, empty, err := parseJSON(src)
	if empty || err != nil {
		return nil, err
	}
	if _, err := f.rootObject(&root); err != nil {
		return nil, err
	}
	root.Standardize()
	var doc map[string]any
	if err := json.Unmarshal(root.Pack(), &doc); err != nil {
		return nil, &ParseError{Err: err}
	}
	servers, has := doc[f.key]
	if !has {
		return nil, nil
	}
	sm, ok := servers.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %q is %s, not an object", ErrStructure, f.key, describe(servers))
	}
	entry, has := sm[ServerName]
	if !has {
		return nil, nil
	}
	em, ok := entry.(map[string]any)
	if !ok {
		return map[string]any{}, nil
	}
	return em, nil
}

// unitOf guesses one level of the file's indentation from the top-level
// members, falling back to dflt.
func unitOf(root *hujson.Value, dflt string) string {
	for _, m := range objectOf(root).Members {
		b := m.Name.BeforeExtra
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			if ind := leadingBlanks(b[i+1:]); ind != "" {
				return ind
			}
		}
	}
	return dflt
}

func newline(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

func (f jsonFormat) install(src []byte, want Entry) ([]byte, error) {
	root, empty, err := parseJSON(src)
	if err != nil {
		return nil, err
	}
	fields := entryFields(f.fixed, want)
	if empty {
		return f.newDocument(src, fields), nil
	}
	rootObj, err := f.rootObject(&root)
	if err != nil {
		return nil, err
	}
	l := layout{src: src, unit: unitOf(&root, f.indent), nl: newline(src)}
	si := members(rootObj, f.key)
	if len(si) == 0 {
		if err := l.insertMember(&root, f.key, []field{{ServerName, fields}}); err != nil {
			return nil, err
		}
		return root.Pack(), nil
	}
	// With a name given twice, clients keep the last one; so do we.
	servers := &rootObj.Members[si[len(si)-1]].Value
	sobj := objectOf(servers)
	if sobj == nil {
		return nil, fmt.Errorf("%w: %q is not an object", ErrStructure, f.key)
	}
	ei := members(sobj, ServerName)
	if len(ei) == 0 {
		err = l.insertMember(servers, ServerName, fields)
	} else if last := ei[len(ei)-1]; objectOf(&sobj.Members[last].Value) == nil {
		err = l.setMemberValue(servers, last, fields)
	} else {
		err = f.updateEntry(l, &sobj.Members[last].Value, want)
	}
	if err != nil {
		return nil, err
	}
	for j := len(ei) - 2; j >= 0; j-- {
		deleteMember(servers, ei[j])
	}
	return root.Pack(), nil
}

// newDocument writes a whole file holding only our entry, after whatever
// comments the empty file had.
func (f jsonFormat) newDocument(prefix []byte, fields []field) []byte {
	nl := newline(prefix)
	body := renderJSON([]field{{f.key, []field{{ServerName, fields}}}}, "", f.indent, nl, false) + nl
	if len(bytes.TrimSpace(prefix)) == 0 {
		return []byte(body)
	}
	out := bytes.Clone(prefix)
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, nl...)
	}
	return append(out, body...)
}

// updateEntry sets the fields Install owns in our existing entry at ev and
// leaves any other field a person added to it.
func (f jsonFormat) updateEntry(l layout, ev *hujson.Value, want Entry) error {
	obj := objectOf(ev)
	owned := append(slices.Clone(f.fixed), field{"command", want.Command}, field{"args", argsOf(want)})
	for _, fd := range owned {
		idx := members(obj, fd.key)
		var err error
		switch {
		case len(idx) == 0:
			err = l.insertMember(ev, fd.key, fd.val)
		case !sameJSON(obj.Members[idx[len(idx)-1]].Value, fd.val):
			err = l.setMemberValue(ev, idx[len(idx)-1], fd.val)
		}
		if err != nil {
			return err
		}
	}
	if err := f.updateEnv(l, ev, want); err != nil {
		return err
	}
	for _, k := range conflicting {
		idx := members(obj, k)
		for j := len(idx) - 1; j >= 0; j-- {
			deleteMember(ev, idx[j])
		}
	}
	return nil
}

func (f jsonFormat) updateEnv(l layout, ev *hujson.Value, want Entry) error {
	obj := objectOf(ev)
	idx := members(obj, "env")
	if len(idx) == 0 {
		if len(want.Env) == 0 {
			return nil
		}
		return l.insertMember(ev, "env", envFields(want.Env))
	}
	ei := idx[len(idx)-1]
	env := &obj.Members[ei].Value
	if objectOf(env) == nil { // null, or something no client accepts
		if len(want.Env) == 0 {
			deleteMember(ev, ei)
			return nil
		}
		return l.setMemberValue(ev, ei, envFields(want.Env))
	}
	removed := false
	for _, k := range want.envKeys() {
		ki := members(objectOf(env), k)
		w, wants := want.Env[k]
		var err error
		switch {
		case wants && len(ki) == 0:
			err = l.insertMember(env, k, w)
		case wants && !sameJSON(objectOf(env).Members[ki[len(ki)-1]].Value, w):
			err = l.setMemberValue(env, ki[len(ki)-1], w)
		case !wants:
			for j := len(ki) - 1; j >= 0; j-- {
				deleteMember(env, ki[j])
				removed = true
			}
		}
		if err != nil {
			return err
		}
	}
	if removed && len(objectOf(env).Members) == 0 {
		deleteMember(ev, ei)
	}
	return nil
}

func (f jsonFormat) uninstall(src []byte) ([]byte, error) {
	root, empty, err := parseJSON(src)
	if err != nil {
		return nil, err
	}
	if empty {
		return src, nil
	}
	rootObj, err := f.rootObject(&root)
	if err != nil {
		return nil, err
	}
	for _, si := range members(rootObj, f.key) {
		servers := &rootObj.Members[si].Value
		if objectOf(servers) == nil {
			continue
		}
		ei := members(objectOf(servers), ServerName)
		for j := len(ei) - 1; j >= 0; j-- {
			deleteMember(servers, ei[j])
		}
	}
	return root.Pack(), nil
}
