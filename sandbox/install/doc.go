// Package install owns install_packages: package names checked before any
// reach pip or npm, each manager's command and environment, what earlier
// installs left in a sandbox (the specs asked for and the workspace
// entries they placed), the short-lived helper container that reinstalls
// them all with the network (only a proxy to the package indexes), the
// collect step that rewrites its install tree and unpacks it as the
// sandbox user, and what a failed install's output says went wrong
// (network or index, a missing name, a build).
//
// The engine looks the sandbox up, checks the policy, holds the install
// lock and passes in, through Host, the helper run with its proxy, execs
// in the sandbox and what a helper's failure means for the sandbox.
//
// Imports: sandbox/backend, sandbox/netglue
package install
