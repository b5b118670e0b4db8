package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
)

// A tool's schemas come from its Go structs, the one source of each
// argument's name, type, requiredness and description:
//
//   - json:"name" is a required argument, json:"name,omitempty" an
//     optional one;
//   - jsonschema:"…" is its description;
//   - enum:"a,b", min:"N" and max:"N" bound its value (for an array: its
//     number of items), default:"v" is its default;
//   - in each of these, {key} is replaced by the tool's vars (the config
//     in force: languages, limits), so a schema says this installation's
//     values; an enum or a default that comes out empty is left out.
//
// Output schemas are loose (outputSchema): the top-level fields a client
// acts on, and their types.
//
// Slices are typed "array", not ["null","array"] (which the MCP
// Inspector's strict mode rejects as not portable): the server never
// sends null for one.

// checkSchema is the schema the server checks arguments of type T against
// (validate): inputSchema's, strict (no unknown arguments) and without
// the bounds the config sets, which the engine checks.
func checkSchema[T any]() json.RawMessage {
	raw, err := json.Marshal(schemaFor[T](tagVars{check: true}))
	if err != nil {
		panic(fmt.Sprintf("schema of %v: %v", reflect.TypeFor[T](), err))
	}
	return raw
}

// inputSchema is the input schema of arguments of type T. It leaves out
// additionalProperties: false, which would cost every conversation 28
// bytes a tool; the server refuses unknown arguments all the same, by
// name (validate).
func inputSchema[T any](vars map[string]string) mcp.ToolOption {
	s := schemaFor[T](tagVars{m: vars})
	s.AdditionalProperties = nil
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("schema of %v: %v", reflect.TypeFor[T](), err))
	}
	return func(t *mcp.Tool) {
		// The raw schema replaces the one mcp.NewTool began with.
		t.InputSchema = mcp.ToolInputSchema{}
		t.RawInputSchema = raw
	}
}

// noArgs is the input schema of a tool without arguments: the smallest
// that says so (validate refuses any argument all the same).
func noArgs() mcp.ToolOption {
	return func(t *mcp.Tool) {
		t.InputSchema = mcp.ToolInputSchema{}
		t.RawInputSchema = json.RawMessage(`{"type":"object"}`)
	}
}

// outputSchema is the output schema of results of type T, naming only
// the given top-level fields and their types: every byte of a schema is
// sent in every conversation, and the fields a client acts on are few (a
// nested object's shape is plain in the result itself). Other fields are
// allowed, so the schema holds for the whole result and when it grows a
// field. A field T does not have is a programming error.
func outputSchema[T any](fields ...string) mcp.ToolOption {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schemaOf[T](nil), &s); err != nil {
		panic(fmt.Sprintf("output schema of %v: %v", reflect.TypeFor[T](), err))
	}
	loose := jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, name := range fields {
		p, ok := s.Properties[name]
		if !ok {
			panic(fmt.Sprintf("output schema of %v: no field %q", reflect.TypeFor[T](), name))
		}
		loose.Properties[name] = &jsonschema.Schema{Type: p.Type}
	}
	raw, err := json.Marshal(loose)
	if err != nil {
		panic(fmt.Sprintf("output schema of %v: %v", reflect.TypeFor[T](), err))
	}
	return mcp.WithRawOutputSchema(raw)
}

// schemaOf derives T's schema, as JSON.
func schemaOf[T any](vars map[string]string) json.RawMessage {
	raw, err := json.Marshal(schemaFor[T](tagVars{m: vars}))
	if err != nil {
		panic(fmt.Sprintf("schema of %v: %v", reflect.TypeFor[T](), err))
	}
	return raw
}

// schemaFor derives T's schema; a struct the tags cannot describe is a
// programming error, caught by every test that starts a server.
func schemaFor[T any](vars tagVars) *jsonschema.Schema {
	t := reflect.TypeFor[T]()
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("schema of %v: %v", t, err))
	}
	if err := applyTags(t, s, vars); err != nil {
		panic(fmt.Sprintf("schema of %v: %v", t, err))
	}
	return s
}

// applyTags walks t and its schema s together: it applies the bounds and
// the vars, and makes nullable slices plain arrays.
func applyTags(t reflect.Type, s *jsonschema.Schema, vars tagVars) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyTags(t.Elem(), s.Items, vars)
	case reflect.Map:
		return applyTags(t.Elem(), s.AdditionalProperties, vars)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			prop := s.Properties[name]
			if !f.IsExported() || prop == nil {
				continue
			}
			if err := applyField(f, prop, vars); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if err := applyTags(f.Type, prop, vars); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return nil
}

// tagVars fill the {key}s of a struct's tags.
type tagVars struct {
	m map[string]string
	// check derives the schema the server checks arguments against
	// (checkSchema): no descriptions, and a tag with a {key} is left out,
	// as the bounds the config sets are the engine's to check, in an
	// error that names the setting to change.
	check bool
}

// applyField applies one field's description, enum, bounds and default,
// each with the vars filled in.
func applyField(f reflect.StructField, prop *jsonschema.Schema, vars tagVars) error {
	if vars.check {
		prop.Description = ""
	}
	desc, err := fill(prop.Description, vars.m)
	if err != nil {
		return err
	}
	prop.Description = desc
	tag := func(key string) (string, error) {
		v := f.Tag.Get(key)
		if vars.check && strings.Contains(v, "{") {
			return "", nil
		}
		return fill(v, vars.m)
	}
	e, err := tag("enum")
	if err != nil {
		return err
	}
	for v := range strings.SplitSeq(e, ",") {
		if v != "" {
			prop.Enum = append(prop.Enum, v)
		}
	}
	for _, b := range []struct {
		tag   string
		num   **float64
		items **int
	}{{"min", &prop.Minimum, &prop.MinItems}, {"max", &prop.Maximum, &prop.MaxItems}} {
		v, err := tag(b.tag)
		if err != nil {
			return err
		}
		if v == "" {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%s tag %q: %w", b.tag, v, err)
		}
		if f.Type.Kind() == reflect.Slice {
			i := int(n)
			*b.items = &i
			continue
		}
		*b.num = &n
	}
	d, err := tag("default")
	if err != nil || d == "" {
		return err
	}
	return setDefault(f.Type, prop, d)
}

// fill replaces the {key}s of s with vars; a key the tool does not set is
// a programming error, found when the server starts, not a "{key}" shown
// to clients. The values come from the config and are not read again: a
// brace in one is text.
func fill(s string, vars map[string]string) (string, error) {
	var b strings.Builder
	for rest := s; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		key, after, ok := strings.Cut(rest[i+1:], "}")
		v, set := vars[key]
		if !ok || !set {
			return "", fmt.Errorf("%q names a var the tool does not set", s)
		}
		b.WriteString(rest[:i] + v)
		rest = after
	}
}

// setDefault sets prop's default to v, typed as the field is.
func setDefault(t reflect.Type, prop *jsonschema.Schema, v string) error {
	var d any = v
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("default %q: %w", v, err)
		}
		d = n
	case reflect.Float64:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("default %q: %w", v, err)
		}
		d = n
	case reflect.Bool:
		d = v == "true"
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("default %q: %w", v, err)
	}
	prop.Default = raw
	return nil
}

// spec is what a tool says of itself besides its arguments.
type spec struct {
	name, description string
	annotations       mcp.ToolOption
	// vars fill the {key}s of the argument tags (schemaVars).
	vars   map[string]string
	output mcp.ToolOption
}

// defineTool declares a tool whose arguments are an A: its input schema
// is derived from A and its handler gets the call's arguments bound to
// one, so the two cannot disagree.
func defineTool[A any](sp spec, h func(context.Context, mcp.CallToolRequest, A) (*mcp.CallToolResult, error)) toolDef {
	tool := mcp.NewTool(sp.name, mcp.WithDescription(sp.description), sp.annotations, inputSchema[A](sp.vars), sp.output)
	return toolDef{tool: tool, check: checkSchema[A](), handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a A
		if err := req.BindArguments(&a); err != nil {
			return invalidArgs(err), nil
		}
		return h(ctx, req, a)
	}}
}

// sandboxRef is the sandbox_id argument of the tools that work on one
// sandbox.
type sandboxRef struct {
	SandboxID string `json:"sandbox_id"`
}
