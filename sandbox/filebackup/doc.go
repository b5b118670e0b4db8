// Package filebackup keeps the backups that MCP Sandbox makes before it
// changes a file it shares with the user (the config file, an AI client's
// config): one naming scheme and one pruning rule for all of them, so the
// README can describe them once.
//
//	bak, err := filebackup.Create(path, old, 0o600, time.Now())
//	// … write the new content …
//	filebackup.Prune(path)
//
// Imports: none
package filebackup
