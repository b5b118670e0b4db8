package assets

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func decode(t *testing.T, name string, b []byte, size int) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if r := img.Bounds(); r.Dx() != size || r.Dy() != size {
		t.Fatalf("%s is %v, want %d×%d", name, r.Size(), size, size)
	}
	return img
}

// TestEveryFile reads every icon the accessors promise and checks that it
// is a PNG of the size asked for.
func TestEveryFile(t *testing.T) {
	for _, s := range AppSizes {
		decode(t, "app", AppPNG(s), s)
	}
	for _, st := range States {
		for _, s := range TraySizes {
			decode(t, "tray "+st, TrayPNG(st, s), s)
		}
		for _, s := range TemplateSizes {
			decode(t, "template "+st, TemplatePNG(st, s), s)
		}
		if len(TemplateSVG(st)) == 0 {
			t.Errorf("template %s: empty SVG", st)
		}
	}
	if !bytes.Contains(AppSVG(), []byte("<svg")) {
		t.Error("AppSVG is not an SVG")
	}
}

// TestTrayBadge checks the one thing a person reads from a tray icon: the
// badge's colour, the same as app/icons uses for each state.
func TestTrayBadge(t *testing.T) {
	want := map[string]color.NRGBA{
		Running:       {0x2e, 0xa0, 0x4f, 0xff},
		Paused:        {0xe0, 0x9b, 0x1a, 0xff},
		DockerMissing: {0xd0, 0x3b, 0x30, 0xff},
	}
	for st, c := range want {
		img := decode(t, st, TrayPNG(st, 64), 64)
		// Inside the badge, above the white marks of pause and "!".
		got := color.NRGBAModel.Convert(img.At(48, 38)).(color.NRGBA)
		if got != c {
			t.Errorf("%s badge = %v, want %v", st, got, c)
		}
		// The ring between badge and tile is transparent.
		if _, _, _, a := img.At(34, 48).RGBA(); a != 0 {
			t.Errorf("%s: the gap around the badge is not transparent", st)
		}
	}
}

// TestTemplateMonochrome: macOS uses only a template's alpha, so any colour
// in it would be a mistake, and an empty one would show nothing.
func TestTemplateMonochrome(t *testing.T) {
	for _, st := range States {
		for _, s := range TemplateSizes {
			img := decode(t, st, TemplatePNG(st, s), s)
			opaque := 0
			for y := 0; y < s; y++ {
				for x := 0; x < s; x++ {
					c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
					if c.A > 0 && (c.R > 2 || c.G > 2 || c.B > 2) {
						t.Fatalf("%s %d px: colour %v at %d,%d, want black", st, s, c, x, y)
					}
					if c.A == 0xff {
						opaque++
					}
				}
			}
			if opaque < s*s/8 {
				t.Errorf("%s %d px: only %d opaque pixels", st, s, opaque)
			}
		}
	}
}

// TestTemplateSVGThemeable checks that the templates use only what Fyne's
// SVG recolouring keeps (it drops elements and attributes it does not
// know): filled <path>s in an <svg>.
func TestTemplateSVGThemeable(t *testing.T) {
	for _, st := range States {
		d := xml.NewDecoder(bytes.NewReader(TemplateSVG(st)))
		paths := 0
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", st, err)
			}
			el, ok := tok.(xml.StartElement)
			if !ok {
				continue
			}
			switch el.Name.Local {
			case "svg":
			case "path":
				paths++
				if !slices.ContainsFunc(el.Attr, func(a xml.Attr) bool { return a.Name.Local == "fill" }) {
					t.Errorf("%s: a path without fill", st)
				}
				for _, a := range el.Attr {
					if a.Name.Local != "fill" && a.Name.Local != "d" {
						t.Errorf("%s: path attribute %s would be lost", st, a.Name.Local)
					}
				}
			default:
				t.Errorf("%s: <%s> would be lost when recoloured", st, el.Name.Local)
			}
		}
		if paths == 0 {
			t.Errorf("%s: no paths", st)
		}
	}
}

// TestICO checks the Windows icon holds every size the shell asks for.
func TestICO(t *testing.T) {
	b, err := os.ReadFile("mcp-sandbox.ico")
	if err != nil {
		t.Fatal(err)
	}
	var hdr struct{ Reserved, Type, Count uint16 }
	r := bytes.NewReader(b)
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil || hdr.Type != 1 {
		t.Fatalf("not an ICO: %+v %v", hdr, err)
	}
	var sizes []int
	for range hdr.Count {
		var e struct {
			W, H, Colors, Reserved uint8
			Planes, BPP            uint16
			Size, Offset           uint32
		}
		if err := binary.Read(r, binary.LittleEndian, &e); err != nil {
			t.Fatal(err)
		}
		w := int(e.W)
		if w == 0 {
			w = 256 // 0 means 256 in an ICO directory
		}
		sizes = append(sizes, w)
	}
	if diff := cmp.Diff([]int{16, 24, 32, 48, 64, 256}, sizes); diff != "" {
		t.Errorf("ICO sizes (-want +got):\n%s", diff)
	}
}

// TestICNS checks the macOS icon's container and that it has the large
// sizes Finder and the Dock use.
func TestICNS(t *testing.T) {
	b, err := os.ReadFile("mcp-sandbox.icns")
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:4]) != "icns" || int(binary.BigEndian.Uint32(b[4:8])) != len(b) {
		t.Fatal("not an ICNS file, or its length field is wrong")
	}
	var types []string
	for off := 8; off+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off+4 : off+8]))
		if n < 8 || off+n > len(b) {
			t.Fatalf("bad element at %d", off)
		}
		types = append(types, string(b[off:off+4]))
		off += n
	}
	for _, want := range []string{"ic08", "ic09", "ic10", "il32"} { // 256, 512, 1024 and 32 px
		if !slices.Contains(types, want) {
			t.Errorf("ICNS has %v, missing %s", types, want)
		}
	}
}

// TestUnknownPanics: asking for an icon that does not exist is a
// programming error, reported at once rather than as a blank icon.
func TestUnknownPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"size":  func() { AppPNG(17) },
		"state": func() { TrayPNG("sleeping", 64) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
