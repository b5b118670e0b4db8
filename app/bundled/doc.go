// Package bundled finds the mcp-sandbox server that ships with the tray and
// talks to it the way an AI client does: its version, and a test that spawns
// it over stdio and runs a line of Python.
//
//	srv, err := bundled.Find(exe)
//	res, err := bundled.Test(ctx, bundled.TestOptions{Path: srv.Path})
//	fmt.Println(res.Output, res.RoundTrip)
//
// Imports: app/clientconfig, app/internal/childproc, sandbox/buildinfo, sandbox/mcpclient
package bundled
