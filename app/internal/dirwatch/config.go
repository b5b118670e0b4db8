package dirwatch

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// ConfigPoll is how often FollowConfig reads the config file while a
// folder it lives in cannot be watched (it does not exist yet, or inotify
// is out of watches): config.Watcher.Run's pace.
const ConfigPoll = 2 * time.Second

// ConfigSafetyPoll is how often FollowConfig reads the file while its
// folder is watched: a safety net for what sends no events (a network
// file system), rare enough that an idle tray stays asleep.
const ConfigSafetyPoll = time.Minute

// FollowConfig keeps w, the watcher of the config file at path, current
// until ctx is done without waking up every few seconds: it checks the
// file when its folder changes (and, for a symlink such as a dotfiles
// manager makes, its target's folder), else every ConfigSafetyPoll;
// every ConfigPoll while a folder cannot be watched.
func FollowConfig(ctx context.Context, w *config.Watcher, path string, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	files := []string{path}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		files = append(files, real)
	}
	every := ConfigSafetyPoll
	for _, f := range files {
		fw, err := start(filepath.Dir(f))
		if err != nil {
			log.Info("the config file's folder cannot be watched; reading the file every 2 s", "err", err)
			every = ConfigPoll
			continue
		}
		go follow(ctx, fw, 100*time.Millisecond, w.Check, []string{filepath.Base(f)})
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.Check()
		}
	}
}
