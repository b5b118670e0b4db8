// Package output bounds what comes back from sandboxes. A call's stdout
// and stderr are kept as a Capture pair: the head and tail of
// limits.output_bytes between them, with a note of how much was left out
// and where the whole is. The whole goes to an output File in the sandbox,
// written by a process there as the output streams past, so the server
// never holds it. The MemBudget makes calls that buffer large data from
// sandboxes queue instead of adding up, and holds each share until the
// answer made of it is written. (The figure budget is the interpreters':
// sandbox/interp.)
//
// Imports: none
package output
