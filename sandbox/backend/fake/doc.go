// Package fake is an in-memory sandbox backend for tests of the engine's
// own logic (the warm pool, expiry, reaping, limits, error paths): no
// Docker, no kernel, and no wall-clock waits, so that tests run it inside
// a testing/synctest bubble, where its clock is the bubble's.
//
// It passes the backend conformance suite (sandbox/backend/backendtest),
// so it cannot drift from what the Docker backend does; the suite skips
// only the checks that need a real kernel (which processes /proc still
// shows after a kill), through the backendtest.NoKernel capability it
// declares.
//
// A container is a record (spec, labels, state), an in-memory file system
// (a read-only root with /bin holding the simulated commands, a writable
// /workspace and /tmp owned by the sandbox user) and the processes running
// in it. Processes are simulated: /bin/sh -c runs its script with a POSIX
// shell interpreter, and the commands are a small table (see [Commands]):
// true, false, echo, printf, pwd, cat (stdin or files), sleep N (on the
// clock, ended when the process is killed), id, touch, mkdir, ln, stat -c,
// ls, head -c, grep, seq, cut, setsid, rm. Anything else exits 127, so the
// engine's command agent and resident interpreters find they cannot run
// (the image has no chmod) and the engine execs through the backend.
//
// Faults are injected on demand: [Backend.Fail] makes calls of one
// operation fail, [Backend.SetGone] makes the whole engine unreachable,
// [Backend.Vanish] removes a container from outside (docker rm -f),
// [Backend.Exit] stops one on its own (docker kill, an OOM kill), and
// [Backend.Put] adds a container another server left behind.
//
// This package is for tests only: no shipped binary links it
// (TestNotInBinaries holds that).
//
// Imports: sandbox/backend
package fake
