package trayapp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// Where python's "Choose a local image…" sits at 800×560 when it is the
// checklist's only failing language, in window coordinates.
const chooseX, chooseY = 95, 253

// In the real window (Xvfb, 800×560), with python's image missing: its
// checklist line offers Choose a local image…; the tiny image, without
// python3, is refused, naming why, and the config file is not touched;
// the test python image is tried, written as the one line
// python = "…" under the file's [images] (every other byte kept), and the
// checks run again: the headline no longer says python cannot run.
func TestWindowChooseLocalImage(t *testing.T) {
	skipUnderRace(t)
	needXdotool(t)
	cli := apptest.Docker(t, apptest.PythonImage, apptest.NodeImage, apptest.TinyImage)
	defer cli.Close()
	d := startDesktop(t)
	p, _ := d.startTray(t, nil, "--hidden")
	cfgPath := filepath.Join(p.home, ".config", "mcp-sandbox", "config.toml")
	// No python line: the default image, absent here, with pulls off.
	before := strings.Replace(apptest.ConfigTOML(), `python = "`+apptest.PythonImage+`"`+"\n", "", 1)
	if err := os.WriteFile(cfgPath, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	wp := startWindow(t, d, p, nil, "--tab", ui.TabStatus, "--size", "800x560")
	waitFor(t, "the headline to say python cannot run", 90*time.Second, func() bool {
		return strings.HasPrefix(p.windowHeadline(), "Needs attention: code in python cannot run")
	})
	time.Sleep(2 * time.Second) // the checklist drawn
	windowShown(t, wp, "choose-image-offered-800x560")
	if err := p.clickAt(chooseX, chooseY); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the list of images shown, its filter focused
	windowShown(t, wp, "choose-image-list-800x560")
	choose := func(ref string) {
		t.Helper()
		for _, args := range [][]string{{"key", "ctrl+a"}, {"type", "--delay", "20", ref}, {"key", "Return"}} {
			if _, err := p.xdo(args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	choose(apptest.TinyImage)
	waitFor(t, "the window to refuse "+apptest.TinyImage, 60*time.Second, func() bool {
		return strings.Contains(p.windowLog(), "msg=\"image refused\" language=python image="+apptest.TinyImage)
	})
	windowShown(t, wp, "choose-image-refused-800x560")
	if got, _ := os.ReadFile(cfgPath); string(got) != before {
		t.Fatalf("a refused image changed the config file:\n%s", got)
	}
	choose(apptest.PythonImage)
	waitFor(t, "the window to write "+apptest.PythonImage, 60*time.Second, func() bool {
		return strings.Contains(p.windowLog(), "msg=\"image chosen\" language=python image="+apptest.PythonImage)
	})
	want := strings.Replace(before, `pull = "never"`+"\n", `pull = "never"`+"\n"+`python = "`+apptest.PythonImage+`"`+"\n", 1)
	if got, _ := os.ReadFile(cfgPath); string(got) != want {
		t.Errorf("the config file after the choice:\n%s\nwant:\n%s", got, want)
	}
	waitFor(t, "the headline to stop saying python cannot run", 90*time.Second, func() bool {
		h := p.windowHeadline()
		return h != "" && !strings.Contains(h, "cannot run")
	})
	time.Sleep(2 * time.Second)
	windowShown(t, wp, "choose-image-done-800x560")
	wp.endWindow(t)
}
