//go:build race

package mcpserver_test

// raceDetector is set when the tests run under -race.
const raceDetector = true
