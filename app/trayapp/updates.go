package trayapp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/update"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// updateEvery is how often the tray looks for a release while the
// setting ([update] check) is on.
const updateEvery = 24 * time.Hour

// updateLoop checks for a newer release shortly after start and then
// daily, while the setting is on; "Check for updates" in the menu checks
// at once either way.
func (a *App) updateLoop(ctx context.Context) {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if a.cfg.Current().Update.Check {
			a.checkUpdates(ctx, false)
		}
		t.Reset(updateEvery)
	}
}

// updateSettingChanged checks at once when the setting was just turned on.
func (a *App) updateSettingChanged(c *config.Config) {
	a.mu.Lock()
	was := a.updateOn
	a.updateOn = c.Update.Check
	a.mu.Unlock()
	if c.Update.Check && !was {
		a.goBG(func(ctx context.Context) { a.checkUpdates(ctx, false) })
	}
}

// updateOptions are the configured check's options; asked says the user
// chose "Check for updates", which checks even with the setting off.
func (a *App) updateOptions(asked bool) (update.Options, error) {
	u := a.cfg.Current().Update
	if asked {
		u.Check = true
	}
	return update.FromConfig(u)
}

// checkUpdates looks for a newer signed release for this system and
// install kind; when one is found it is offered in the menu and a
// notification says so. A feed that fails verification is refused, with
// the reason, and nothing is offered.
func (a *App) checkUpdates(ctx context.Context, asked bool) {
	o, err := a.updateOptions(asked)
	if err == nil {
		var rel *update.Release
		rel, err = update.Check(ctx, o)
		if err == nil {
			a.mu.Lock()
			prev := a.offer
			a.offer = rel
			a.mu.Unlock()
			a.redraw()
			switch {
			case rel == nil:
				a.log.Info("update check: up to date")
				if asked {
					a.notify("MCP Sandbox is up to date.")
				}
			case prev == nil || prev.Version != rel.Version || asked:
				a.log.Info("update check: a newer release", "version", rel.Version, "file", rel.Artifact.Name)
				a.notify("MCP Sandbox " + rel.Version + " is available: choose “" + strings.TrimSuffix(installLabel(rel.Version), "…") + "” in the tray menu.")
			}
			return
		}
	}
	a.log.Warn("update check", "err", err)
	if !errors.Is(err, update.ErrFetch) {
		// A release that fails verification is not offered any more.
		a.mu.Lock()
		a.offer = nil
		a.mu.Unlock()
		a.redraw()
	}
	if asked || !errors.Is(err, update.ErrFetch) {
		a.notify("Update check failed, nothing was offered: " + updateWhy(err))
	}
}

func installLabel(v string) string { return "Install MCP Sandbox " + v + "…" }

// updateWhy says why an update was refused, in words.
func updateWhy(err error) string {
	switch {
	case errors.Is(err, update.ErrSignature):
		return "the release is not signed by the MCP Sandbox release key (" + err.Error() + ")"
	case errors.Is(err, update.ErrChecksum):
		return "the downloaded file is not the one the release was signed for (" + err.Error() + ")"
	case errors.Is(err, update.ErrKey):
		return "this build has no release key to verify updates with; set [update] public_key (" + err.Error() + ")"
	}
	return err.Error()
}

// installOffer downloads the offered release, verifies its size, SHA-256
// and signature, and only then opens it with the system's installer.
func (a *App) installOffer(ctx context.Context) {
	a.mu.Lock()
	rel := a.offer
	a.mu.Unlock()
	if rel == nil {
		return
	}
	o, err := a.updateOptions(true)
	if err != nil {
		a.notify("Update refused: " + updateWhy(err))
		return
	}
	dir := filepath.Join(a.st.Dir(), "updates")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		a.notify("Update failed: " + err.Error())
		return
	}
	path, err := update.Download(ctx, o, rel, dir)
	if err != nil {
		a.log.Warn("update download refused", "err", err)
		a.notify("Update refused, the file was deleted: " + updateWhy(err))
		return
	}
	a.log.Info("update downloaded and verified", "path", path)
	if err := openInstaller(path); err != nil {
		a.notify("MCP Sandbox " + rel.Version + " was downloaded and verified (" + path + "), but could not be opened: " + err.Error())
		return
	}
	a.notify("MCP Sandbox " + rel.Version + " was downloaded and verified; its installer is opening (" + filepath.Base(path) + ").")
}

// openInstaller opens a verified download the platform's usual way.
func openInstaller(path string) error {
	switch runtime.GOOS {
	case "darwin":
		return exec.Command("open", path).Start()
	case "windows":
		return exec.Command(path).Start()
	}
	if strings.HasSuffix(path, ".tar.xz") {
		path = filepath.Dir(path) // the folder: the archive is unpacked by hand
	}
	return exec.Command("xdg-open", path).Start()
}
