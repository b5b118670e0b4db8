package icons

import (
	"bytes"
	"image/png"
	"testing"
)

// TestIcons checks every icon decodes at its size and that the three tray
// states look different (assets/ tests the badge colours themselves).
func TestIcons(t *testing.T) {
	seen := map[string]State{}
	for _, s := range []State{Running, Paused, DockerMissing} {
		data := Tray(s).Content()
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		if b := img.Bounds(); b.Dx() != 64 || b.Dy() != 64 {
			t.Errorf("%v: %v, want 64×64", s, b)
		}
		if other, dup := seen[string(data)]; dup {
			t.Errorf("%v looks the same as %v", s, other)
		}
		seen[string(data)] = s
	}
	app, err := png.Decode(bytes.NewReader(App().Content()))
	if err != nil || app.Bounds().Dx() != 256 {
		t.Fatalf("app icon: %v", err)
	}
}
