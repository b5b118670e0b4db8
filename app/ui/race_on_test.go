//go:build race

package ui

// raceDetector is set when the tests run under -race, where each software
// draw of the window costs about ten times what it costs without.
const raceDetector = true
