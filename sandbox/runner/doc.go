// Package runner holds the resident interpreters that run_code talks to
// instead of starting a process per call, and the small framed protocol
// between them and the engine.
//
// An interpreter is started once per sandbox with an attached exec. The
// engine writes one line, "NONCE LENGTH\n", followed by the interpreter's
// source (embedded in this package) to its stdin; a bootstrap passed on the
// command line reads and runs it. From then on both sides exchange frames:
//
//	NONCE KIND LENGTH\n
//	PAYLOAD (LENGTH bytes)
//
// NONCE is 32 random hex characters chosen by the engine for this
// interpreter, so a frame cannot appear by accident. The engine sends "run"
// frames (a JSON [RunRequest]); the interpreter answers with "ready" once
// (JSON [Ready]), then for each run any number of "out" and "err" frames
// (raw output bytes, in order), "fig" frames (PNG images), and one "done"
// frame (JSON [Done]).
//
// Inside the container, frames travel on their own file descriptors (the
// exec's original stdin and stdout, duplicated before anything else runs);
// the user code's stdout and stderr — file descriptors 1 and 2, so the
// output of subprocesses too — are pipes the interpreter relays as "out" and
// "err" frames. Every byte the code wrote comes before the frame that ends
// the run: the runner reads the pipes empty before it sends that frame
// (Python's main thread, under the lock its relay threads read them with;
// Node's relay thread, the only one that reads them).
//
// Any process in the sandbox can write frames too (the nonce is readable
// by the sandbox user), so the engine treats them as hostile: a frame other
// than "fig" may announce at most [MaxPayload] bytes, and the [Decoder]'s
// [Gate] decides at each header how much of a payload is kept, reading
// past the rest without buffering it.
//
//	argv := runner.Argv("python")
//	boot := runner.Boot("python", nonce) // write this to the exec's stdin first
//
// Imports: none
package runner
