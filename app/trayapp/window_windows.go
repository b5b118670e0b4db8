package trayapp

import "os"

// terminate ends a process (Windows has no SIGTERM to send another
// process).
func terminate(p *os.Process) { p.Kill() }
