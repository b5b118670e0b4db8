package assets

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
)

// AlertRed is the dot AlertPNG puts on colour icons.
var AlertRed = color.NRGBA{R: 0xd9, G: 0x2b, B: 0x2b, A: 0xff}

// AlertPNG returns the PNG icon src with a round dot in its top right
// corner (a third of its width, ringed in white so it reads on any panel),
// in dot's colour: the tray's "something failed" variant of whichever
// state icon it shows. For a macOS template image pass black: the menu
// bar tints it like the rest. src is one of this package's PNGs; should
// it not decode, it is returned unchanged.
func AlertPNG(src []byte, dot color.Color) []byte {
	img, err := png.Decode(bytes.NewReader(src))
	if err != nil {
		return src
	}
	b := img.Bounds()
	out := image.NewNRGBA(b)
	draw.Draw(out, b, img, b.Min, draw.Src)
	d := float64(b.Dx()) / 3
	cx, cy := float64(b.Max.X)-d/2-0.5, float64(b.Min.Y)+d/2-0.5
	ring, r := d/2, d/2-float64(b.Dx())/32-0.5
	white := color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
	if _, _, _, a := dot.RGBA(); a > 0 && isBlack(dot) {
		white = color.NRGBA{} // a template: the ring is cut out instead
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			dx, dy := float64(x)-cx, float64(y)-cy
			switch dd := dx*dx + dy*dy; {
			case dd <= r*r:
				out.Set(x, y, dot)
			case dd <= ring*ring:
				out.Set(x, y, white)
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, out); err != nil {
		return src
	}
	return buf.Bytes()
}

func isBlack(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r == 0 && g == 0 && b == 0
}
