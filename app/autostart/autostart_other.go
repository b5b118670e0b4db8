//go:build !linux && !darwin && !windows

package autostart

func location() string        { return "" }
func enabled() (bool, error)  { return false, nil }
func enable(exe string) error { return ErrUnsupported }
func disable() error          { return nil }
