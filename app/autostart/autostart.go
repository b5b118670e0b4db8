package autostart

import (
	"errors"
	"fmt"
)

// HiddenFlag is the argument the login entry passes, so the tray starts
// in the background instead of opening its window.
const HiddenFlag = "--hidden"

// ErrUnsupported means this system has no login-start mechanism we know.
var ErrUnsupported = errors.New("autostart is not supported on this system")

// Enabled reports whether the tray starts at login.
func Enabled() (bool, error) {
	on, err := enabled()
	if err != nil {
		return false, fmt.Errorf("autostart: %w", err)
	}
	return on, nil
}

// Set makes the tray executable exe start at login (on) or not (off).
// Turning it on again rewrites the entry, so it follows a moved binary.
func Set(on bool, exe string) error {
	var err error
	if on {
		if exe == "" {
			return errors.New("autostart: no executable given")
		}
		err = enable(exe)
	} else {
		err = disable()
	}
	if err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}

// Location says where the login entry lives, for the Settings tab.
func Location() string { return location() }
