// Package firstrun does what the tray does the first time it starts: it
// adds the bundled server to the AI clients people most often have (Claude
// Desktop and Cursor), when they are installed, and says so.
//
//	rep, err := firstrun.Run(ctx, firstrun.Options{Env: clientconfig.OSEnv(), Command: server, StateDir: dir})
//	if msg := rep.Message(); msg != "" {
//		notify(msg) // "… Restart Claude Desktop to load it."
//	}
//
// Imports: app/clientconfig, app/installplace
package firstrun
