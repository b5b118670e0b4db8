// Package hostcopy is the host's side of copy_in and copy_out that needs
// no engine: the fence every copy goes through (the config's lists plus
// the paths no list can open: MCP Sandbox's own config and state and the
// engine's and cluster's credentials), and the tar streams the engine
// moves in and out of a sandbox (the directories a copy needs, a root
// archive filtered to what the sandbox user could read, the first entry
// and the error a producer ended with). The engine decides which sandbox
// path a copy uses and runs the sandbox's tar.
//
// Imports: sandbox/config, sandbox/hostfs
package hostcopy
