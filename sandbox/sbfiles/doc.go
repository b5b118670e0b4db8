// Package sbfiles is the sandbox's side of the file tools: the paths
// resolved in a sandbox (no symlink out of /workspace and /tmp), the tar
// streams moved in and out of its container (the image's tar run as the
// sandbox user, else the engine's archive API), reads, writes, listings and
// copy_out's and copy_in's sandbox halves. It works on one Box: the backend,
// container, user and the engine's exec and error classes as plain values.
// The engine checks requests, picks the sandbox and keeps the budgets and
// the transcript.
//
// Imports: sandbox/backend, sandbox/hostcopy, sandbox/hostfs
package sbfiles
