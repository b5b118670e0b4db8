// Package buildbin builds the agent's binaries reproducibly; the generator
// and the test that checks the committed binaries share it.
//
// Imports: none
package buildbin
