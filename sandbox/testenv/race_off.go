//go:build !race

package testenv

// Race is set when the test binary was built with -race.
const Race = false
