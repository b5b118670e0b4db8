package clientconfig

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
)

// This file edits a hujson syntax tree in place so that only the members
// being changed move: every other byte of the file, comments and trailing
// commas included, packs back exactly as it was read. New members copy the
// indentation of their siblings; a removed member takes its own line and
// trailing comment with it and nothing else.

// layout carries what the editor needs to indent new text like the file.
type layout struct {
	src  []byte // the file as read; offsets in unedited values point here
	unit string // one level of indentation
	nl   string // the file's line ending
}

func objectOf(v *hujson.Value) *hujson.Object {
	o, _ := v.Value.(*hujson.Object)
	return o
}

// members returns the indexes of obj's members called name, in order.
func members(obj *hujson.Object, name string) []int {
	var idx []int
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			idx = append(idx, i)
		}
	}
	return idx
}

// lineIndent returns the blanks that start the line holding offset off.
func lineIndent(src []byte, off int) string {
	if off > len(src) {
		off = len(src)
	}
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

func leadingBlanks(b []byte) string {
	n := 0
	for n < len(b) && (b[n] == ' ' || b[n] == '\t') {
		n++
	}
	return string(b[:n])
}

// memberIndent says how a new member of the object at v is laid out: the
// indentation of its line, or inline when the object sits on one line.
func (l layout) memberIndent(v *hujson.Value) (indent string, inline bool) {
	obj := objectOf(v)
	for i := len(obj.Members) - 1; i >= 0; i-- {
		b := obj.Members[i].Name.BeforeExtra
		if j := bytes.LastIndexByte(b, '\n'); j >= 0 {
			return leadingBlanks(b[j+1:]), false
		}
	}
	if len(obj.Members) > 0 && !bytes.Contains(obj.AfterExtra, []byte("\n")) {
		return "", true
	}
	return lineIndent(l.src, v.StartOffset) + l.unit, false
}

// closingIndent is the indentation of the line that closes the object at v,
// for when that brace moves onto a line of its own.
func (l layout) closingIndent(v *hujson.Value) string {
	return lineIndent(l.src, v.StartOffset)
}

// insertMember appends name: val to the object at v.
func (l layout) insertMember(v *hujson.Value, name string, val any) error {
	obj := objectOf(v)
	indent, inline := l.memberIndent(v)
	parsed, err := hujson.Parse([]byte(renderJSON(val, indent, l.unit, l.nl, inline)))
	if err != nil {
		return err
	}
	parsed.BeforeExtra = []byte(" ")
	m := hujson.ObjectMember{Name: hujson.Value{Value: hujson.String(name)}, Value: parsed}
	n := len(obj.Members)
	if n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		m.Value.AfterExtra = []byte{} // the file ends its lists with a comma; so do we
	}
	if inline {
		if n > 0 {
			m.Name.BeforeExtra = []byte(" ")
		}
		obj.Members = append(obj.Members, m)
		return nil
	}
	// Whatever follows the last member up to the final line break (its
	// comma's comment, say) stays on that member's line; the closing brace
	// keeps its own line, or gets one.
	head, tail := obj.AfterExtra, []byte(nil)
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		if i > 0 && head[i-1] == '\r' {
			i--
		}
		head, tail = head[:i], head[i:]
	} else if n == 0 {
		tail = []byte(l.nl + l.closingIndent(v))
	}
	head = bytes.TrimRight(head, " \t")
	m.Name.BeforeExtra = []byte(string(head) + l.nl + indent)
	obj.AfterExtra = bytes.Clone(tail)
	obj.Members = append(obj.Members, m)
	return nil
}

// setMemberValue replaces the value of member i of the object at v, keeping
// the comments and spacing around it.
func (l layout) setMemberValue(v *hujson.Value, i int, val any) error {
	obj := objectOf(v)
	indent, inline := l.memberIndent(v)
	parsed, err := hujson.Parse([]byte(renderJSON(val, indent, l.unit, l.nl, inline)))
	if err != nil {
		return err
	}
	obj.Members[i].Value.Value = parsed.Value
	return nil
}

// deleteMember removes member i of the object at v, with the line it was
// on and the comment that trailed it, and leaves every other comment.
func deleteMember(v *hujson.Value, i int) {
	obj := objectOf(v)
	n := len(obj.Members)
	m := obj.Members[i]
	ownHead, ownRest := splitFirstLine(m.Name.BeforeExtra)
	if i < n-1 {
		next := &obj.Members[i+1]
		_, nextRest := splitFirstLine(next.Name.BeforeExtra)
		if len(nextRest) == 0 { // on one line: keep the spacing of the removed member
			next.Name.BeforeExtra = bytes.Clone(m.Name.BeforeExtra)
		} else {
			next.Name.BeforeExtra = concat(ownHead, dropLastLine(ownRest), nextRest)
		}
	} else {
		after := obj.AfterExtra
		_, afterRest := splitFirstLine(after)
		var before []byte
		if i > 0 {
			prev := &obj.Members[i-1]
			if m.Value.AfterExtra == nil { // the previous member becomes the last, without a comma
				before = prev.Value.AfterExtra
				prev.Value.AfterExtra = nil
			} else if prev.Value.AfterExtra == nil { // and keeps the trailing comma
				prev.Value.AfterExtra = []byte{}
			}
		}
		if len(afterRest) == 0 {
			obj.AfterExtra = concat(before, commentOnly(ownHead), after)
		} else {
			obj.AfterExtra = concat(before, ownHead, dropLastLine(ownRest), afterRest)
		}
	}
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	if len(obj.Members) == 0 && len(bytes.TrimSpace(obj.AfterExtra)) == 0 {
		obj.AfterExtra = nil
	}
}

// splitFirstLine splits extra before its first line break: what trails the
// previous token on its line, and the rest.
func splitFirstLine(b []byte) (head, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i:]
	}
	return b, nil
}

// dropLastLine removes the blanks after the last line break, which indent
// the token that is being removed.
func dropLastLine(b []byte) []byte {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

func commentOnly(b []byte) []byte {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return b
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// sameJSON reports whether the value v means the same as val.
func sameJSON(v hujson.Value, val any) bool {
	v = v.Clone()
	v.BeforeExtra, v.AfterExtra = nil, nil
	v.Standardize()
	var got, want any
	if json.Unmarshal(v.Pack(), &got) != nil {
		return false
	}
	if json.Unmarshal([]byte(renderJSON(val, "", "", "", true)), &want) != nil {
		return false
	}
	return reflect.DeepEqual(got, want)
}

// renderJSON writes val (a string, []string or []field) as JSON. Objects
// spread over lines (ended by nl) indented from indent by unit, or stay on
// one line when inline is set. Lists of strings always stay on one line.
func renderJSON(val any, indent, unit, nl string, inline bool) string {
	var b strings.Builder
	writeJSON(&b, val, indent, unit, nl, inline)
	return b.String()
}

func writeJSON(b *strings.Builder, val any, indent, unit, nl string, inline bool) {
	switch val := val.(type) {
	case string:
		b.WriteString(quoteJSON(val))
	case []string:
		b.WriteByte('[')
		for i, s := range val {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteJSON(s))
		}
		b.WriteByte(']')
	case []field:
		if len(val) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, f := range val {
			if inline {
				if i > 0 {
					b.WriteString(", ")
				}
			} else {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(nl + indent + unit)
			}
			b.WriteString(quoteJSON(f.key) + ": ")
			writeJSON(b, f.val, indent+unit, unit, nl, inline)
		}
		if !inline {
			b.WriteString(nl + indent)
		}
		b.WriteByte('}')
	default:
		panic("clientconfig: cannot render " + reflect.TypeOf(val).String())
	}
}

// quoteJSON quotes s as a JSON string, leaving <, > and & alone: config
// files are not HTML.
func quoteJSON(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}
