// Package clientsetup sets up an AI client from the tray's Clients menu or
// the window's Clients tab: it writes (or repairs) our entry in the
// client's config and says what it did, in the same words in both places.
//
//	msg, err := clientsetup.Configure(ctx, "cursor", clientconfig.InstallOptions{
//		Env: clientconfig.OSEnv(), Command: server}, log)
//	if err != nil {
//		msg = "Could not set up Cursor: " + err.Error()
//	}
//	notify(msg) // "Set up Cursor in …. Restart Cursor to load it."
//
// Imports: app/clientconfig
package clientsetup
