// Package applog writes a log file that rotates by size, so a tray left
// running for months keeps a bounded log. Several processes may share one
// file (every `mcp-sandbox serve` an AI client starts writes server.log):
// each write and each rotation happens under a lock file beside the log,
// and a writer whose file another process has rotated away reopens the
// new one, so no process writes into a file that was rotated out from
// under it or rotates a file another has just started.
//
//	w, err := applog.Open(filepath.Join(config.StateDir(), "logs"), "tray", applog.Options{})
//	log := slog.New(slog.NewTextHandler(w, nil))
//	defer w.Close()
//
// Imports: none
package applog
