package assets

import (
	"bytes"
	"image/color"
	"image/png"
	"testing"
)

// The alert variant is the same size as the icon, differs from it, and
// has the dot's colour in its top right corner and the icon's pixels
// elsewhere.
func TestAlertPNG(t *testing.T) {
	for _, state := range States {
		src := TrayPNG(state, 64)
		out := AlertPNG(src, AlertRed)
		a, err := png.Decode(bytes.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		b, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s: the alert icon does not decode: %v", state, err)
		}
		if a.Bounds() != b.Bounds() {
			t.Fatalf("%s: bounds %v, want %v", state, b.Bounds(), a.Bounds())
		}
		if got := color.NRGBAModel.Convert(b.At(53, 10)); got != AlertRed {
			t.Errorf("%s: top right pixel %v, want the alert red", state, got)
		}
		ra, ga, ba, aa := a.At(10, 54).RGBA()
		rb, gb, bb, ab := b.At(10, 54).RGBA()
		if ra != rb || ga != gb || ba != bb || aa != ab {
			t.Errorf("%s: the bottom left changed", state)
		}
	}
}
