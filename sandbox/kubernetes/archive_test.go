package kubernetes

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"strings"
	"testing"
)

type entry struct {
	name, link string
	typ        byte
}

func archive(t *testing.T, entries ...entry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: 0o644}
		if e.typ == tar.TypeReg {
			h.Size = 1
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			_, _ = tw.Write([]byte("x"))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// fenceTar passes what lands below the target and refuses every entry
// that would land elsewhere, before the container's tar sees it.
func TestFenceTar(t *testing.T) {
	cases := []struct {
		name    string
		entries []entry
		refused string // part of the error; "" passes
	}{
		{"files and dirs", []entry{{name: "d/", typ: tar.TypeDir}, {name: "d/f", typ: tar.TypeReg}, {name: "./g", typ: tar.TypeReg}}, ""},
		{"symlink anywhere, hard link inside", []entry{{name: "f", typ: tar.TypeReg}, {name: "l", link: "/etc/shadow", typ: tar.TypeSymlink}, {name: "h", link: "f", typ: tar.TypeLink}}, ""},
		{"dotdot", []entry{{name: "../../tmp/x", typ: tar.TypeReg}}, "climbs out"},
		{"dotdot inside", []entry{{name: "a/../../x", typ: tar.TypeReg}}, "climbs out"},
		{"absolute", []entry{{name: "/etc/x", typ: tar.TypeReg}}, "absolute"},
		{"the target itself", []entry{{name: "./", typ: tar.TypeDir}}, "target itself"},
		{"write through the archive's symlink", []entry{{name: "l", link: "/etc", typ: tar.TypeSymlink}, {name: "l/passwd", typ: tar.TypeReg}}, "below the archive's symlink"},
		{"deep below the archive's symlink", []entry{{name: "a/l", link: "/", typ: tar.TypeSymlink}, {name: "a/l/b/c", typ: tar.TypeReg}}, "below the archive's symlink"},
		{"hard link out", []entry{{name: "h", link: "../../etc/passwd", typ: tar.TypeLink}}, "climbs out"},
		{"hard link absolute", []entry{{name: "h", link: "/etc/passwd", typ: tar.TypeLink}}, "absolute"},
		{"device", []entry{{name: "dev", typ: tar.TypeChar}}, "not copied"},
		{"fifo", []entry{{name: "p", typ: tar.TypeFifo}}, "not copied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := fenceTar(archive(t, c.entries...), &out)
			if c.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				tr := tar.NewReader(&out)
				n := 0
				for {
					h, err := tr.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if strings.HasPrefix(h.Name, "/") || strings.Contains(h.Name, "..") {
						t.Errorf("passed on %q", h.Name)
					}
					n++
				}
				if n != len(c.entries) {
					t.Errorf("passed on %d entries of %d", n, len(c.entries))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("fenceTar = %v, want an error saying %q", err, c.refused)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	cases := []struct {
		line string
		size int64
		mode fs.FileMode
		ok   bool
	}{
		{"5 81a4", 5, 0o644, true},
		{"4096 41ed", 4096, fs.ModeDir | 0o755, true},
		{"1 a1ff", 1, fs.ModeSymlink | 0o777, true},
		{"5 644 f", 5, 0o644, true},
		{"4096 755 d", 4096, fs.ModeDir | 0o755, true},
		{"1 777 l", 1, fs.ModeSymlink | 0o777, true},
		{"5 4755 f", 5, fs.ModeSetuid | 0o755, true},
		{"x 81a4", 0, 0, false},
		{"5 644 q", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, c := range cases {
		size, mode, err := parseStat(c.line)
		if (err == nil) != c.ok || (c.ok && (size != c.size || mode != c.mode)) {
			t.Errorf("parseStat(%q) = %d, %v, %v; want %d, %v, ok %v", c.line, size, mode, err, c.size, c.mode, c.ok)
		}
	}
}

func TestCanonicalImage(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                      "docker.io/library/busybox:latest",
		"python:3":                     "docker.io/library/python:3",
		"mcp-sandbox-test/python:3":    "docker.io/mcp-sandbox-test/python:3",
		"ghcr.io/a/b":                  "ghcr.io/a/b:latest",
		"localhost:5000/a:1":           "localhost:5000/a:1",
		"registry.local/a@sha256:abcd": "registry.local/a@sha256:abcd",
	} {
		if got := canonicalImage(in); got != want {
			t.Errorf("canonicalImage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestObjectName(t *testing.T) {
	for _, n := range []string{"mcp-sandbox-abc234", "MCP_Sandbox", strings.Repeat("a", 70), "a.b"} {
		o := objectName(n)
		if !dnsLabel.MatchString(o) {
			t.Errorf("objectName(%q) = %q, not a DNS label", n, o)
		}
		if dnsLabel.MatchString(n) && o != n {
			t.Errorf("objectName(%q) = %q, want the name itself", n, o)
		}
	}
	if objectName("MCP_A") == objectName("MCP_B") {
		t.Error("two names map to one object name")
	}
}

// The trailer is taken off however the writes split it, and nothing of the
// command's own output is lost or held back past its next write.
func TestTrailerWriter(t *testing.T) {
	const marker = "\nNONCE "
	cases := []struct {
		name   string
		writes []string
		out    string
		code   int
		seen   bool
	}{
		{"whole", []string{"hello\n\nNONCE 3\n"}, "hello\n", 3, true},
		{"no newline at the end of output", []string{"hi", "\nNONCE 0\n"}, "hi", 0, true},
		{"split in the marker", []string{"a\n\nNO", "NCE 1", "7\nlater"}, "a\n", 17, true},
		{"a lookalike passes", []string{"\nNONCX 1\n", "tail"}, "\nNONCX 1\ntail", 0, false},
		{"no trailer: everything flushed", []string{"x\n"}, "x\n", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			w := newTrailerWriter(&out, marker)
			for _, s := range c.writes {
				if _, err := w.Write([]byte(s)); err != nil {
					t.Fatal(err)
				}
			}
			code, seen := w.status()
			if out.String() != c.out || seen != c.seen || code != c.code {
				t.Errorf("out %q, code %d, seen %v; want %q, %d, %v", out.String(), code, seen, c.out, c.code, c.seen)
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The command's last output reaches the writer before seen closes: Exec
// stops the output once it has, and nothing may be left in between.
func TestTrailerWriterDeliversBeforeSeen(t *testing.T) {
	var w *trailerWriter
	var got bytes.Buffer
	w = newTrailerWriter(writerFunc(func(p []byte) (int, error) {
		select {
		case <-w.seen:
			t.Errorf("%q written after seen closed", p)
		default:
		}
		return got.Write(p)
	}), "\nNONCE ")
	if _, err := w.Write([]byte("1 a1ff\n/workspace/f\n\nNONCE 0\n")); err != nil {
		t.Fatal(err)
	}
	if got.String() != "1 a1ff\n/workspace/f\n" {
		t.Errorf("delivered %q", got.String())
	}
}
