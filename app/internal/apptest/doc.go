// Package apptest gives the tray's tests the real things they need: the
// mcp-sandbox and mcp-sandbox-tray binaries built from this tree, a Docker
// engine with the test images, an X display and a D-Bus daemon. On top of
// sandbox/testenv, it skips a test when one is missing locally and fails it
// when CI=true.
//
// Imports: internal/clitest, sandbox/testenv
package apptest
