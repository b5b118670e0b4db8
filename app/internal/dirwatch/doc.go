// Package dirwatch follows a few named files in one directory (the state
// directory's pause flag, the tray's state file, the audit log) with
// fsnotify, so the tray and the window learn of a change without polling;
// FollowConfig does so for the config file.
//
// Imports: sandbox/config
package dirwatch
