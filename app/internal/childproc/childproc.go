package childproc

import "os/exec"

// NoWindow keeps cmd from opening a console window. It is a no-op except
// on Windows.
func NoWindow(cmd *exec.Cmd) { noWindow(cmd) }
