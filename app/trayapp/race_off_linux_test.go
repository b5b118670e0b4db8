//go:build !race

package trayapp

// raceDetector: see race_on_linux_test.go.
const raceDetector = false
