//go:build cgo

package windowapp

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/clientsetup"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// actions binds the window's buttons to the app.
func (a *App) actions() ui.Actions {
	return ui.Actions{
		Status: ui.StatusActions{
			Test:   a.testServer,
			Detect: a.engine.Redetect,
			Pause:  func(ctx context.Context, paused bool) error { return a.setPaused(ctx, paused) },
			Pull:   a.pullImage,
			Images: a.localImages,
			Use:    a.useImage,
		},
		Sandboxes: ui.SandboxActions{Stop: a.stopOne, StopAll: a.stopAll, Details: a.detailsActions()},
		Clients: ui.ClientActions{
			List:      func(context.Context) []ui.ClientRow { return a.refreshClients() },
			Configure: a.configureClient,
			Remove:    a.removeClient,
			Verify:    a.verifyClient,
		},
		Settings: ui.SettingsActions{Load: a.loadSettings, Save: a.saveSettings},
		Activity: ui.ActivityActions{Read: func(limit int) ([]state.AuditEntry, error) { return a.st.ReadAudit(limit) }},
		Changes:  ui.ChangesActions{List: a.listProposals, Decide: a.decideProposal},
	}
}

// testServer is the Status tab's Test button.
func (a *App) testServer(ctx context.Context) (bundled.TestResult, error) {
	if a.serverErr != nil {
		return bundled.TestResult{}, a.serverErr
	}
	return bundled.Test(ctx, bundled.TestOptions{Path: a.server.Path, Getenv: a.getenv, Env: a.entryEnv()})
}

// entryEnv is the env our client entries carry.
func (a *App) entryEnv() map[string]string {
	if h := a.entryHost(); h != "" {
		return map[string]string{"DOCKER_HOST": h}
	}
	return nil
}

func (a *App) entryHost() string { return a.engine.EntryHost() }

// refreshClients reads every client's state, for the Clients tab and the
// tray's Clients menu, and returns it.
func (a *App) refreshClients() []ui.ClientRow {
	env := a.clientEnv()
	var rows []ui.ClientRow
	for _, c := range clientconfig.Clients() {
		st, err := c.Status(clientconfig.StatusOptions{Env: env, Command: a.server.Path, DockerHost: a.entryHost()})
		r := ui.ClientRow{Name: c.Name(), Display: c.DisplayName()}
		if st != nil {
			r.Installed, r.Configured, r.Matches, r.Path, r.LastBackup = st.Installed, st.Configured, st.Matches, st.Path, st.LastBackup
		}
		if err != nil {
			r.Problem = err.Error()
		}
		rows = append(rows, r)
	}
	a.update(func(s *uiState) { s.clients = rows })
	a.do(func() { a.win.Clients.Set(rows) })
	return rows
}

// configureClient writes (or repairs) our entry in a client's config.
func (a *App) configureClient(ctx context.Context, name string) (string, error) {
	if a.serverErr != nil {
		return "", a.serverErr
	}
	return clientsetup.Configure(ctx, name, clientconfig.InstallOptions{Env: a.clientEnv(), Command: a.server.Path, DockerHost: a.entryHost()}, a.log)
}

func (a *App) removeClient(ctx context.Context, name string) (string, error) {
	c, err := clientconfig.Lookup(name)
	if err != nil {
		return "", err
	}
	res, err := c.Uninstall(ctx, clientconfig.UninstallOptions{Env: a.clientEnv()})
	if err != nil {
		return "", err
	}
	a.log.Info("removed client entry", "client", name, "path", res.Path, "backup", res.Backup)
	if !res.Changed {
		return fmt.Sprintf("%s had no mcp-sandbox entry.", c.DisplayName()), nil
	}
	return fmt.Sprintf("Removed the mcp-sandbox entry from %s (the old file is kept as %s).", res.Path, filepath.Base(res.Backup)), nil
}

func (a *App) verifyClient(ctx context.Context, name string) (string, error) {
	c, err := clientconfig.Lookup(name)
	if err != nil {
		return "", err
	}
	res, err := c.Verify(ctx, clientconfig.VerifyOptions{Env: a.clientEnv()})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s's entry works: %s %s answered (%d tools, protocol %s) in %d ms.",
		c.DisplayName(), res.ServerName, res.ServerVersion, res.Tools, res.ProtocolVersion, (res.Startup + res.RoundTrip).Milliseconds()), nil
}

// loadSettings reads the config file for the Settings tab.
func (a *App) loadSettings() (*config.Config, error) {
	c, err := config.Load(config.Path())
	if err != nil {
		return a.cfg.Current(), err
	}
	return c, nil
}

// saveSettings writes the Settings tab's values; the tray and the servers
// reload them.
func (a *App) saveSettings(ctx context.Context, c *config.Config) (string, error) {
	path := config.Path()
	backup, err := config.Save(path, c)
	if err != nil {
		return "", err
	}
	a.log.Info("settings saved", "path", path, "backup", backup)
	// The tray's config watcher applies autostart, the HTTP server and
	// the update check within its interval.
	msg := "Saved to " + path
	if backup != "" {
		msg += " (the previous file is kept as " + filepath.Base(backup) + ")"
	}
	return msg + ". Running servers pick it up within seconds (" + time.Now().Format("15:04:05") + ").", nil
}
