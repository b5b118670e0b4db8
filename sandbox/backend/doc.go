// Package backend is the contract between the sandbox engine (package
// sandbox) and a container platform, as database/sql/driver is to
// database/sql: a backend imports this package, never the engine.
//
// A backend implements [Backend]. It may also implement the optional
// capabilities below; the engine finds them by type assertion and works
// without them:
//
//   - [Attacher]: keep a process running with its streams attached (the
//     resident interpreters of run_code). Without it, every call is one exec.
//   - [RuntimeChecker]: say whether the engine has an OCI runtime registered
//     (docker.runtime = "auto" picks gVisor's runsc when it is). Without it,
//     "auto" means the engine's default runtime.
//   - [Inspector]: describe one container by id, with its limits (`ps` and
//     the tray ask it for containers made before the limit labels existed).
//     Without it, such containers show no limits.
//   - [ArchReporter]: say the engine machine's architecture, which picks
//     the agent binary. Without it, the server's own is assumed.
//   - [Expirer]: move the expiry at which the platform ends a sandbox by
//     itself (Kubernetes). Without it, only servers end sandboxes.
//
// [Hardening], built by [HardeningFor], is what every container gets that
// no caller chooses: each backend renders it, and its tests read it back.
//
// The error classes ([ErrDockerUnreachable], [ErrImageNotFound], [ErrPull],
// [ErrWorkspace]) and the names the engine and its backends agree on (the
// labels, [Workspace], [InstallCacheMount], [NamePrefix]) are here too.
//
// sandbox/backend/backendtest is the behaviour every backend must have,
// as a test suite a backend runs against itself.
//
// Imports: none
package backend
