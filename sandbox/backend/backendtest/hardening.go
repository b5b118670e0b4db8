package backendtest

import (
	"reflect"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// CompareHardening compares got, the hardening a backend's rendered object
// (a container's configuration, a pod) reads back as, with want, the
// description it was rendered from, field by field. notRendered names the
// fields the backend's platform cannot carry, each with whose they are
// instead; every other field of want must be set (so that a rule left
// unrendered cannot hide behind a zero) and equal in got.
func CompareHardening(t *testing.T, want, got backend.Hardening, notRendered map[string]string) {
	t.Helper()
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	known := map[string]bool{}
	for i := range wv.NumField() {
		name := wv.Type().Field(i).Name
		known[name] = true
		if _, skip := notRendered[name]; skip {
			continue
		}
		w, g := wv.Field(i), gv.Field(i)
		switch {
		case w.IsZero() && name != "Egress" && name != "Runtime":
			t.Errorf("Hardening.%s is zero in the description tested: give it a value, so that not rendering it fails", name)
		case !reflect.DeepEqual(w.Interface(), g.Interface()):
			t.Errorf("Hardening.%s: described %v, rendered %v", name, w.Interface(), g.Interface())
		}
	}
	for name := range notRendered {
		if !known[name] {
			t.Errorf("%q is listed as not rendered but is no field of backend.Hardening", name)
		}
	}
}
