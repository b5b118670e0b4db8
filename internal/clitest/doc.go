// Package clitest runs this module's programs from tests (of this module
// only; it is not an API) as a client or a person would: each ./cmd
// binary built once per test process, run with the environment the test
// gives it (its own home, state and config directories), its output
// captured while it runs, and waits for what it writes bounded by a
// deadline.
//
// Imports: sandbox/testenv
package clitest
