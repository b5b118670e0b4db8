//go:build !darwin

package installplace

import "runtime"

const goos = runtime.GOOS

func readOnlyFS(string) bool { return false }

// MoveToApplications is for macOS only.
func MoveToApplications(Place) (string, error) { return "", ErrUnsupported }

// Relaunch is for macOS only.
func Relaunch(string) error { return ErrUnsupported }
