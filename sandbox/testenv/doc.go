// Package testenv gives tests (of this module only; it is not an API) the real components they need (a Docker
// engine, the test images, a config) and decides what happens when one is
// missing: skip with the reason locally, fail when CI=true.
// NeedBinaries leaves the tests that build the programs out of the fast
// layer (CGO_ENABLED=0 without CI).
//
// Imports: sandbox/config
package testenv
