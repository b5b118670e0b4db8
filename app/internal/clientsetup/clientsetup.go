package clientsetup

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
)

// Configure writes our entry into the config of the client called name
// (clientconfig.Lookup), replacing one that differs (opts.Force is set),
// logs where, and returns the message for the person.
func Configure(ctx context.Context, name string, opts clientconfig.InstallOptions, log *slog.Logger) (string, error) {
	c, err := clientconfig.Lookup(name)
	if err != nil {
		return "", err
	}
	opts.Force = true
	res, err := c.Install(ctx, opts)
	if err != nil {
		return "", err
	}
	log.Info("configured client", "client", name, "path", res.Path, "backup", res.Backup)
	if !res.Changed {
		return fmt.Sprintf("%s was already set up in %s.", c.DisplayName(), res.Path), nil
	}
	msg := fmt.Sprintf("Set up %s in %s", c.DisplayName(), res.Path)
	if res.Backup != "" {
		msg += " (the old file is kept as " + filepath.Base(res.Backup) + ")"
	}
	return msg + ". Restart " + c.DisplayName() + " to load it.", nil
}
