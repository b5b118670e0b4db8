// Command build rebuilds the agent's binaries in ../../prebuilt (run through go
// generate in package agent).
//
// Imports: sandbox/agent/internal/buildbin
package main
