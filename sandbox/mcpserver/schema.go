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
//   - jsonschema:"…" is its description, in which {key} is replaced by
//     the tool's vars (the config's languages and limits);
//   - enum:"a,b", min:"N" and max:"N" bound its value (for an array: its
//     number of items).
//
// Slices are typed "array", not ["null","array"] (which the MCP
// Inspector's strict mode rejects as not portable): the server never
// sends null for one.

// inputSchema is the input schema of arguments of type T.
func inputSchema[T any](vars map[string]string) mcp.ToolOption {
	raw := schemaOf[T](vars)
	return func(t *mcp.Tool) {
		// The raw schema replaces the one mcp.NewTool began with.
		t.InputSchema = mcp.ToolInputSchema{}
		t.RawInputSchema = raw
	}
}

// outputSchema is the output schema of results of type T.
func outputSchema[T any]() mcp.ToolOption {
	return mcp.WithRawOutputSchema(schemaOf[T](nil))
}

// schemaOf derives T's schema; a struct the tags cannot describe is a
// programming error, caught by every test that starts a server.
func schemaOf[T any](vars map[string]string) json.RawMessage {
	t := reflect.TypeFor[T]()
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("schema of %v: %v", t, err))
	}
	if err := applyTags(t, s, vars); err != nil {
		panic(fmt.Sprintf("schema of %v: %v", t, err))
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("schema of %v: %v", t, err))
	}
	return raw
}

// applyTags walks t and its schema s together: it applies the bounds and
// the vars, and makes nullable slices plain arrays.
func applyTags(t reflect.Type, s *jsonschema.Schema, vars map[string]string) error {
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

// applyField applies one field's description vars, enum and bounds.
func applyField(f reflect.StructField, prop *jsonschema.Schema, vars map[string]string) error {
	for k, v := range vars {
		prop.Description = strings.ReplaceAll(prop.Description, "{"+k+"}", v)
	}
	if strings.Contains(prop.Description, "{") {
		return fmt.Errorf("description %q names a var the tool does not set", prop.Description)
	}
	if e := f.Tag.Get("enum"); e != "" {
		for _, v := range strings.Split(e, ",") {
			prop.Enum = append(prop.Enum, v)
		}
	}
	for _, b := range []struct {
		tag   string
		num   **float64
		items **int
	}{{"min", &prop.Minimum, &prop.MinItems}, {"max", &prop.Maximum, &prop.MaxItems}} {
		v := f.Tag.Get(b.tag)
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
	return nil
}

// spec is what a tool says of itself besides its arguments.
type spec struct {
	name, description string
	annotations       mcp.ToolOption
	// vars fill the {key}s of the argument descriptions.
	vars   map[string]string
	output mcp.ToolOption
}

// defineTool declares a tool whose arguments are an A: its input schema
// is derived from A and its handler gets the call's arguments bound to
// one, so the two cannot disagree.
func defineTool[A any](sp spec, h func(context.Context, mcp.CallToolRequest, A) (*mcp.CallToolResult, error)) toolDef {
	tool := mcp.NewTool(sp.name, mcp.WithDescription(sp.description), sp.annotations, inputSchema[A](sp.vars), sp.output)
	return toolDef{tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
	SandboxID string `json:"sandbox_id" jsonschema:"The sandbox, from sandbox_create."`
}
