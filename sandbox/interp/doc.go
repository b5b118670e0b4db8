// Package interp is the engine's side of run_code's sessions: the resident
// Python and JavaScript interpreters it talks to over package runner's
// framed protocol, and the bash session script. A Slot holds one runner
// kind's state in one sandbox (the interpreter, whether its variables would
// be lost, why it cannot run); Slot.Run starts or restarts the interpreter
// as needed, runs code in it, keeps the figures the budgets allow, and says
// how the run ended: a timeout, a cancel, an interpreter that exited or
// broke the protocol (the next run gets a fresh one and state_lost; after
// three breaks in a row the sandbox runs code with one exec per call), or a
// container that stopped under it.
//
// The engine keeps what it decides: starting processes, whether a container
// died and what that means for the call, the output budget and file, and
// the call lock. It passes them in through Host and plain request fields.
//
// Imports: sandbox/backend, sandbox/config, sandbox/runner
package interp
