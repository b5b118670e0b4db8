package traywin

// NoDisplay says, in one line, why this session cannot show a tray or a
// window, or returns "" when it can (as far as can be told before GLFW is
// started, which panics without a display).
func NoDisplay(getenv func(string) string) string { return noDisplayOS(getenv) }
