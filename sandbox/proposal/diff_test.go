package proposal

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// applyHunks applies d's hunks to old, checking every context and removed
// line: the property every diff must have.
func applyHunks(t testing.TB, old []byte, text string) []byte {
	t.Helper()
	a := splitLines(old)
	var out []string
	pos := 0
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines) && lines[i] != ""; i++ {
		l := lines[i]
		if strings.HasPrefix(l, "@@ ") {
			f := strings.Fields(l)
			start, _ := strconv.Atoi(strings.Split(f[1][1:], ",")[0])
			if strings.HasSuffix(f[1], ",0") {
				start++ // an empty range names the line before
			}
			for pos < start-1 {
				out = append(out, a[pos])
				pos++
			}
			continue
		}
		body := l[1:]
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\ No newline`) {
			body = strings.TrimSuffix(body, "\n")
			i++
		}
		switch l[0] {
		case ' ', '-':
			if pos >= len(a) || a[pos] != body {
				t.Fatalf("line %d: diff says %q, file has %q", pos+1, body, a[min(pos, len(a)-1)])
			}
			if l[0] == ' ' {
				out = append(out, body)
			}
			pos++
		case '+':
			out = append(out, body)
		default:
			t.Fatalf("unexpected diff line %q", l)
		}
	}
	out = append(out, a[pos:]...)
	return []byte(strings.Join(out, ""))
}

func randomText(r *rand.Rand) []byte {
	var b bytes.Buffer
	n := r.IntN(40)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "line %c", 'a'+rune(r.IntN(6)))
		if i < n-1 || r.IntN(4) != 0 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// mutate changes some lines of old, so that the pair looks like an edit.
func mutate(r *rand.Rand, old []byte) []byte {
	ls := splitLines(old)
	for k := r.IntN(5); k > 0; k-- {
		i := r.IntN(len(ls) + 1)
		switch r.IntN(3) {
		case 0:
			ls = append(ls[:i], append([]string{fmt.Sprintf("new %d\n", r.IntN(100))}, ls[i:]...)...)
		case 1:
			if i < len(ls) {
				ls = append(ls[:i], ls[i+1:]...)
			}
		case 2:
			if i < len(ls) {
				ls[i] = "changed\n"
			}
		}
	}
	return []byte(strings.Join(ls, ""))
}

// TestDiffAgainstDiffU checks the hunks against GNU diff -u on real files:
// the same counts (both scripts are shortest), and patch(1) turns the old
// file into the new with our diff.
func TestDiffAgainstDiffU(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("no diff(1) on this machine")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	same := 0
	for i := range 300 {
		old := randomText(r)
		var new []byte
		if i%2 == 0 {
			new = mutate(r, old)
		} else {
			new = randomText(r)
		}
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		os.WriteFile(a, old, 0o600)
		os.WriteFile(b, new, 0o600)
		out, _ := exec.Command("diff", "-u", a, b).Output()
		want := ""
		if i := bytes.Index(out, []byte("\n@@")); i >= 0 {
			want = string(out[i+1:])
		}
		got := Diff(old, new)
		add, rem := countLines(want)
		if got.Added != add || got.Removed != rem {
			t.Fatalf("case %d: +%d -%d, diff -u says +%d -%d\nold %q\nnew %q\nours:\n%s\ndiff -u:\n%s", i, got.Added, got.Removed, add, rem, old, new, got.Text, want)
		}
		if got.Text == want {
			same++
		}
		if applied := applyHunks(t, old, got.Text); !bytes.Equal(applied, new) {
			t.Fatalf("case %d: applying our diff gives %q, want %q\n%s", i, applied, new, got.Text)
		}
		if _, err := exec.LookPath("patch"); err == nil && got.Text != "" {
			os.WriteFile(filepath.Join(dir, "p"), []byte("--- a\n+++ b\n"+got.Text), 0o600)
			if out, err := exec.Command("patch", "-s", "-o", filepath.Join(dir, "c"), a, filepath.Join(dir, "p")).CombinedOutput(); err != nil {
				t.Fatalf("case %d: patch: %v %s\n%s", i, err, out, got.Text)
			}
			if c, _ := os.ReadFile(filepath.Join(dir, "c")); !bytes.Equal(c, new) {
				t.Fatalf("case %d: patch gives %q, want %q", i, c, new)
			}
		}
	}
	t.Logf("%d of 300 diffs byte-identical to diff -u", same)
	if same < 150 {
		t.Errorf("only %d of 300 diffs match diff -u byte for byte", same)
	}
}

func countLines(d string) (add, rem int) {
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			rem++
		}
	}
	return add, rem
}

func FuzzDiff(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nc\nd"))
	f.Add([]byte(""), []byte("x\n"))
	f.Fuzz(func(t *testing.T, old, new []byte) {
		d := Diff(old, new)
		if isBinary(old) || isBinary(new) || strings.HasPrefix(d.Text, "file replaced") || strings.Contains(d.Text, "diff cut at") {
			return
		}
		if got := applyHunks(t, old, d.Text); !bytes.Equal(got, new) {
			t.Fatalf("applying the diff gives %q, want %q\n%s", got, new, d.Text)
		}
	})
}

func TestDiffBounds(t *testing.T) {
	var a, b bytes.Buffer
	for i := range maxEdits + 10 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	d := Diff(a.Bytes(), b.Bytes())
	if !strings.HasPrefix(d.Text, "file replaced") || d.Added != maxEdits+10 || d.Removed != maxEdits+10 {
		t.Errorf("hostile pair: %+v", d)
	}
	bin := Diff([]byte("x\x00y"), []byte("x\x00z"))
	if !strings.HasPrefix(bin.Text, "binary file: 3 → 3 bytes, sha256 ") {
		t.Errorf("binary: %q", bin.Text)
	}
	var big strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	cut := Diff(nil, []byte(big.String()))
	if len(cut.Text) > maxDiffBytes+100 || !strings.HasSuffix(cut.Text, "diff cut at 64 KiB\n") || cut.Added != 20000 {
		t.Errorf("big diff: %d bytes, +%d", len(cut.Text), cut.Added)
	}
}

// TestDiffHostileTime: equal runs between many edits make Myers' search
// long; the step bound keeps one diff short (checked by count, not time).
func TestDiffHostileTime(t *testing.T) {
	var a, b bytes.Buffer
	for i := range maxDiffLines - 1 {
		fmt.Fprintf(&a, "x\n")
		if i%70 == 0 {
			fmt.Fprintf(&b, "y%d\n", i)
		} else {
			fmt.Fprintf(&b, "x\n")
		}
	}
	d := Diff(a.Bytes(), b.Bytes())
	if d.Added == 0 || d.Removed == 0 {
		t.Errorf("hostile pair: +%d -%d", d.Added, d.Removed)
	}
}
