//go:build !race

package mcpserver_test

const raceDetector = false
