package hostfs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// Windows spellings of a denied place, on a real Windows file system (CI
// runs this binary under Wine, whose volumes ignore case and give 8.3
// short names as Windows does): other case, a short name, the \\?\ form
// and an alternate data stream all reach the key only through the fence,
// which refuses them; the key is not in a copy of the home.
func TestDenyWindowsSpellings(t *testing.T) {
	h := winTempDir(t)
	files := map[string]string{
		`.ssh\id_rsa`: "KEY",
		`AppData\Roaming\LongSecretDirectory\token.json`: "TOKEN",
		`proj\main.py`: "print(1)",
	}
	for name, content := range files {
		p := filepath.Join(h, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
	f := Fence{ReadRoots: []string{"~"}, Deny: []string{"~/.ssh", "~/AppData/Roaming/LongSecretDirectory"}, Home: h, MaxBytes: 1 << 20}
	long := filepath.Join(h, `AppData\Roaming\LongSecretDirectory`)
	short := shortName(t, long)
	spellings := []string{
		`~\.SSH\ID_RSA`,
		`~\.Ssh`,
		strings.ToUpper(filepath.Join(h, `.ssh\id_rsa`)),
		`\\?\` + filepath.Join(h, `.ssh\id_rsa`),
		filepath.Join(h, `.ssh\id_rsa`) + `::$DATA`,
		filepath.Join(h, `.ssh\id_rsa`) + `:hidden`,
		`~\appdata\roaming\longsecretdirectory\TOKEN.JSON`,
	}
	if short != long {
		spellings = append(spellings, filepath.Join(short, "token.json"), short)
	} else {
		t.Log("this volume gives no 8.3 short names: that spelling is not tried")
	}
	for _, in := range spellings {
		src, err := f.ReadPath(in)
		if err == nil {
			// Whatever the name check let through, the copy must not
			// carry the secret.
			b, _, perr := planBytes(t, f, src)
			if perr == nil && (bytes.Contains(b, []byte("KEY")) || bytes.Contains(b, []byte("TOKEN"))) {
				t.Errorf("ReadPath(%s) = %s, and its copy holds the secret", in, src)
			}
			continue
		}
		if !errors.Is(err, ErrFence) && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("ReadPath(%s): %v; want a refusal", in, err)
		}
		t.Logf("ReadPath(%s): %v", in, err)
	}
	b, _, err := planBytes(t, f, h)
	must(t, err)
	if bytes.Contains(b, []byte("KEY")) || bytes.Contains(b, []byte("TOKEN")) {
		t.Errorf("a denied file is in the copy of the home: %v", tarNames(t, b))
	}
}

// copy_out with write_root = "~" refuses the Startup folder and a client's
// config however they are spelled.
func TestWriteDenyWindowsSpellings(t *testing.T) {
	h := winTempDir(t)
	startup := filepath.Join(h, `AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup`)
	must(t, os.MkdirAll(startup, 0o755))
	cfg := filepath.Join(h, `AppData\Roaming\Claude\claude_desktop_config.json`)
	must(t, os.MkdirAll(filepath.Dir(cfg), 0o755))
	must(t, os.WriteFile(cfg, []byte("{}"), 0o600))
	f := Fence{WriteRoot: h, Home: h, WriteDeny: []string{
		"~/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup",
		"~/AppData/Roaming/Claude/claude_desktop_config.json",
	}}
	dests := []string{
		filepath.Join(h, `appdata\roaming\microsoft\windows\start menu\programs\startup\evil.bat`),
		filepath.Join(h, `APPDATA\ROAMING\CLAUDE\CLAUDE_DESKTOP_CONFIG.JSON`),
	}
	if s := shortName(t, startup); s != startup {
		// The short spelling of the write root itself is another name for
		// it too: keep only the part below the root short.
		dests = append(dests, filepath.Join(h, `AppData\Roaming`, filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(s))))),
			`Windows`, filepath.Base(filepath.Dir(filepath.Dir(s))), `Programs\Startup\evil.bat`))
	}
	for _, dest := range dests {
		_, err := f.Unpack(context.Background(), bytes.NewReader(makeTar(t, tarEntry{name: filepath.Base(dest), body: "pwned"})), h, dest, UnpackOptions{Overwrite: true})
		if err == nil {
			t.Errorf("Unpack to %s: written; want a write_deny refusal", dest)
		}
		t.Logf("Unpack to %s: %v", dest, err)
	}
	if b, err := os.ReadFile(cfg); err != nil || string(b) != "{}" {
		t.Errorf("the client's config changed: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(startup); len(ents) != 0 {
		t.Errorf("the Startup folder has %d entries", len(ents))
	}
}

// shortName is p's 8.3 form, or p where the volume gives none.
func shortName(t *testing.T, p string) string {
	t.Helper()
	in, err := windows.UTF16PtrFromString(p)
	must(t, err)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetShortPathName(in, &buf[0], uint32(len(buf)))
	if err != nil || n == 0 || int(n) > len(buf) {
		return p
	}
	return windows.UTF16ToString(buf[:n])
}

// winTempDir is a temporary directory removed after the test as far as the
// system lets it: Wine 8 cannot carry out Go's RemoveAll (its unlinkat
// answers "Invalid function"), which t.TempDir would report as a failure.
func winTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "hostfs-win-")
	must(t, err)
	t.Cleanup(func() {
		if err := os.RemoveAll(d); err != nil {
			t.Logf("left %s: %v", d, err)
		}
	})
	return d
}
