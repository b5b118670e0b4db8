package trayapp

// noDisplay says, in one line, why this session cannot show a tray or a
// window, or returns "" when it can (as far as can be told before GLFW is
// started, which panics without a display).
func noDisplay(getenv func(string) string) string { return noDisplayOS(getenv) }

// NoDisplay is noDisplay, for the window process.
func NoDisplay(getenv func(string) string) string { return noDisplayOS(getenv) }
