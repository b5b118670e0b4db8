package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

type schemaProbe struct {
	sandboxRef
	Name  string            `json:"name" jsonschema:"A name; default {who}."`
	Count int               `json:"count,omitempty" jsonschema:"How many." min:"1" max:"{most}" default:"{most}"`
	Ratio float64           `json:"ratio,omitempty" min:"0.5"`
	Mode  string            `json:"mode,omitempty" enum:"a,{mode}" default:"a"`
	Kind  string            `json:"kind,omitempty" enum:"{kinds}"`
	Tags  []string          `json:"tags,omitempty" min:"1" max:"3"`
	Env   map[string]string `json:"env,omitempty"`
}

// TestSchemaOf: the schema derived from a tagged struct says what the
// tags say, and nothing is typed as a union with null.
func TestSchemaOf(t *testing.T) {
	raw := schemaOf[schemaProbe](map[string]string{"who": "Ada", "most": "9", "mode": "b", "kinds": ""})
	if strings.Contains(string(raw), `"null"`) {
		t.Errorf("a null union: %s", raw)
	}
	var s struct {
		Required             []string                  `json:"required"`
		AdditionalProperties *bool                     `json:"additionalProperties"`
		Properties           map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Required, ",") != "sandbox_id,name" {
		t.Errorf("required %v, want sandbox_id and name", s.Required)
	}
	if s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Errorf("additionalProperties %v, want false", s.AdditionalProperties)
	}
	for _, c := range []struct{ prop, key, want string }{
		{"name", "description", "A name; default Ada."},
		{"count", "type", "integer"},
		{"count", "minimum", "1"},
		{"count", "maximum", "9"},
		{"count", "default", "9"},
		{"ratio", "type", "number"},
		{"ratio", "minimum", "0.5"},
		{"mode", "enum", "[a b]"},
		{"mode", "default", "a"},
		{"kind", "enum", "<nil>"},
		{"tags", "type", "array"},
		{"tags", "minItems", "1"},
		{"tags", "maxItems", "3"},
		{"env", "additionalProperties", "map[type:string]"},
	} {
		if got := fmtAny(s.Properties[c.prop][c.key]); got != c.want {
			t.Errorf("%s.%s = %s, want %s", c.prop, c.key, got, c.want)
		}
	}
}

// TestSchemaOfUnsetVar: a {var} the tool does not set is a programming
// error, found when the server starts, not a "{who}" shown to clients.
func TestSchemaOfUnsetVar(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for an unset description var")
		}
	}()
	schemaOf[schemaProbe](nil)
}

func fmtAny(v any) string {
	if v == nil {
		return "<nil>"
	}
	b, _ := json.Marshal(v)
	s := strings.Trim(string(b), `"`)
	if arr, ok := v.([]any); ok {
		parts := make([]string, len(arr))
		for i, x := range arr {
			parts[i] = fmtAny(x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for k, x := range m {
			return "map[" + k + ":" + fmtAny(x) + "]"
		}
	}
	return s
}

// TestCheckSchema: the schema the server checks arguments against leaves
// the bounds the config sets to the engine (whose refusal names the
// setting) and keeps the others.
func TestCheckSchema(t *testing.T) {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(checkSchema[schemaProbe](), &s); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ prop, key, want string }{
		{"count", "minimum", "1"},
		{"count", "maximum", "<nil>"},
		{"count", "default", "<nil>"},
		{"mode", "enum", "<nil>"},
		{"name", "description", "<nil>"},
		{"tags", "maxItems", "3"},
	} {
		if got := fmtAny(s.Properties[c.prop][c.key]); got != c.want {
			t.Errorf("%s.%s = %s, want %s", c.prop, c.key, got, c.want)
		}
	}
}

// TestSchemaVarsImages: the images sandbox_create may take are an enum
// while the list is finite, and described once a pattern allows more.
func TestSchemaVarsImages(t *testing.T) {
	cfg := config.Default()
	cfg.Images.Allowed = []string{"python:3.13-slim"}
	if v := schemaVars(cfg); !strings.Contains(v["images"], "python:3.13-slim") || !strings.Contains(v["images"], cfg.Images.Python) {
		t.Errorf("images enum %q, want the language images and python:3.13-slim", v["images"])
	}
	cfg.Images.Allowed = []string{"ghcr.io/me/*"}
	if v := schemaVars(cfg); v["images"] != "" || !strings.Contains(v["image_note"], "ghcr.io/me/*") {
		t.Errorf("images enum %q, note %q; want no enum and a note naming the pattern", v["images"], v["image_note"])
	}
}

// TestFill: a {key} is replaced by its value, a value's braces are text,
// and a key without a value is an error.
func TestFill(t *testing.T) {
	vars := map[string]string{"a": "x{b}", "b": "y"}
	if got, err := fill("{a}-{b}", vars); err != nil || got != "x{b}-y" {
		t.Errorf("fill = %q, %v; want x{b}-y", got, err)
	}
	for _, bad := range []string{"{c}", "{a", "{}"} {
		if got, err := fill(bad, vars); err == nil {
			t.Errorf("fill(%q) = %q, want an error", bad, got)
		}
	}
}
