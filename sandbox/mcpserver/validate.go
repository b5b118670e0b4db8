package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// argSchema is a tool's check schema, compiled on the tool's first call:
// compiling all of them at start-up allocated 0.7 MB and kept 70 KB of
// schemas for tools a conversation may never call (a tool's own compile
// takes under 0.1 ms).
type argSchema struct {
	name string
	raw  json.RawMessage
	once sync.Once
	// Set by compile.
	schema *jsonschema.Schema
	names  []string
	err    error
}

// inputSchemas are the schemas each tool's arguments are checked
// against: its check schema, or its input schema as the clients see it
// made strict (no unknown arguments; the schemas sent leave that out to
// save bytes, see inputSchema). check compiles them.
func inputSchemas(defs []toolDef) (map[string]*argSchema, error) {
	args := map[string]*argSchema{}
	for _, d := range defs {
		name := d.tool.Name
		raw, err := strictSchema(d)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", name, err)
		}
		args[name] = &argSchema{name: name, raw: raw}
	}
	return args, nil
}

// compile compiles a's schema, once.
func (a *argSchema) compile() error {
	a.once.Do(func() {
		a.schema, a.err = compileSchema(a.name, a.raw)
		if a.err != nil {
			return
		}
		for p := range a.schema.Properties {
			a.names = append(a.names, p)
		}
		sort.Strings(a.names)
	})
	return a.err
}

// compileSchema compiles tool name's schema raw.
func compileSchema(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("tool %s input schema: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	url := "mem:///tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %s input schema: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %s input schema: %w", name, err)
	}
	return sch, nil
}

// strictSchema is d's check schema, or its input schema with no unknown
// arguments.
func strictSchema(d toolDef) (json.RawMessage, error) {
	if d.check != nil {
		return d.check, nil
	}
	raw, err := json.Marshal(d.tool)
	if err != nil {
		return nil, err
	}
	var t struct {
		InputSchema map[string]any `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	t.InputSchema["additionalProperties"] = false
	return json.Marshal(t.InputSchema)
}

// validate is middleware that checks a call's arguments against its
// tool's input schema and refuses them in plain words ("code must be a
// string (got a number)") before the handler runs. It runs inside the
// audit, so a refused call is audited too.
func (s *Server) validate(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := (*s.args.Load())[req.Params.Name]
		if a == nil {
			return next(ctx, req)
		}
		args := any(req.Params.RawArguments)
		if len(req.Params.RawArguments) == 0 {
			args = req.Params.Arguments // none sent, or a call made in this process
		}
		if msg := a.check(args); msg != "" {
			return mcp.NewToolResultError("invalid arguments: " + msg), nil
		}
		return next(ctx, req)
	}
}

// check returns what is wrong with args, or "".
func (a *argSchema) check(args any) string {
	if err := a.compile(); err != nil {
		// The tools' schemas are the code's own: TestArgSchemasCompile
		// catches this.
		return err.Error() + " (a bug in mcp-sandbox: report it)"
	}
	// The client's own bytes when there are (no second encoding).
	raw, ok := args.(json.RawMessage)
	var err error
	if !ok {
		raw, err = json.Marshal(args)
	}
	if err != nil || string(bytes.TrimSpace(raw)) == "null" {
		raw = []byte("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return "the arguments are not a JSON object"
	}
	err = a.schema.Validate(v)
	var verr *jsonschema.ValidationError
	if err == nil {
		return ""
	}
	if !errors.As(err, &verr) {
		return err.Error()
	}
	var msgs []string
	for _, leaf := range leaves(verr) {
		msgs = append(msgs, a.words(leaf))
	}
	sort.Strings(msgs)
	return strings.Join(msgs, "; ")
}

// leaves are the validation errors that say what failed (the others only
// group them).
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// words says one failure in plain words, naming the argument.
func (a *argSchema) words(e *jsonschema.ValidationError) string {
	loc := strings.Join(e.InstanceLocation, ".")
	name := loc
	if name == "" {
		name = "the arguments" // the whole of them, not one
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return strings.Join(prefixed(loc, k.Missing), ", ") + " is required"
	case *kind.AdditionalProperties:
		takes := strings.Join(a.names, ", ")
		if takes == "" {
			takes = "none"
		}
		return fmt.Sprintf("there is no argument %s (the tool takes %s)", strings.Join(prefixed(loc, k.Properties), ", "), takes)
	case *kind.Type:
		return fmt.Sprintf("%s must be %s (got %s)", name, orList(article, k.Want), article(k.Got))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprintf("%q", w)
		}
		return fmt.Sprintf("%s must be one of %s (got %q)", name, strings.Join(want, ", "), fmt.Sprint(k.Got))
	case *kind.Minimum:
		return fmt.Sprintf("%s must be at least %s (got %s)", name, ratString(k.Want), ratString(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("%s must be at most %s (got %s)", name, ratString(k.Want), ratString(k.Got))
	case *kind.MinItems:
		return fmt.Sprintf("%s must have at least %d item(s) (got %d)", name, k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("%s must have at most %d item(s) (got %d)", name, k.Want, k.Got)
	}
	if name == "" {
		name = "the arguments"
	}
	return fmt.Sprintf("%s do not match the tool's inputSchema (%s)", name, strings.Join(e.ErrorKind.KeywordPath(), "/"))
}

// prefixed names properties of the object at parent.
func prefixed(parent string, props []string) []string {
	if parent == "" {
		return props
	}
	out := make([]string, len(props))
	for i, p := range props {
		out[i] = parent + "." + p
	}
	return out
}

// article puts "a" or "an" before a JSON type name.
func article(t string) string {
	switch t {
	case "array", "integer", "object":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

// orList joins xs, each through f, with "or".
func orList(f func(string) string, xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return strings.Join(out, " or ")
}

// ratString writes a schema number as the JSON it came from.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return r.FloatString(6)
}
