package traywin

import "testing"

func TestNoDisplayRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool // a reason is given
	}{
		{"nothing", map[string]string{}, true},
		{"wayland", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, false},
		{"remote X", map[string]string{"DISPLAY": "otherhost:0"}, false},
		{"local X without socket", map[string]string{"DISPLAY": ":4711.0"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NoDisplay(func(k string) string { return tc.env[k] }) != ""; got != tc.want {
				t.Errorf("NoDisplay(%v) gives a reason: %v, want %v", tc.env, got, tc.want)
			}
		})
	}
}
