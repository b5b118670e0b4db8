//go:build cgo

package windowapp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// errNotDocker: the image choice lists and probes a Docker (or Podman)
// engine's images; a cluster pulls its own.
var errNotDocker = errors.New("choosing a local image needs a Docker engine: set the image in the config file instead")

// localImages is the list "Choose a local image…" offers.
func (a *App) localImages(ctx context.Context) ([]health.LocalImage, error) {
	conn, err := a.backend()
	if err != nil {
		return nil, err
	}
	if conn.Client == nil {
		return nil, errNotDocker
	}
	return health.LocalImages(ctx, conn.Client)
}

// useImage is the person's choice of ref for language: it is checked as
// doctor checks a language (health.TryImage) and, only if code runs in
// it, written to the language's image setting in the config file, the
// rest of the file kept byte for byte. The config watcher then reloads
// the file and the checks run again.
func (a *App) useImage(ctx context.Context, language, ref string) (string, error) {
	conn, err := a.backend()
	if err != nil {
		return "", err
	}
	if conn.Client == nil {
		return "", errNotDocker
	}
	cfg := a.cfg.Current()
	if err := health.TryImage(ctx, conn.Client, cfg, language, ref); err != nil {
		a.log.Info("image refused", "language", language, "image", ref, "why", err)
		return "", err
	}
	table, key := cfg.ImageSetting(language)
	path := config.Path()
	backup, err := config.SaveString(path, table, key, ref)
	if err != nil {
		return "", err
	}
	a.log.Info("image chosen", "language", language, "image", ref, "path", path, "backup", backup)
	msg := fmt.Sprintf("%s runs in %s: set %s = %q under [%s] in %s", language, ref, key, ref, table, path)
	if backup != "" {
		msg += " (the previous file is kept as " + filepath.Base(backup) + ")"
	}
	return msg + ". Checking again…", nil
}
