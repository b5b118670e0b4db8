package hostfs

import "testing"

// mkfifo skips: Windows has no named pipes in the file system.
func mkfifo(t *testing.T, _ string) { t.Skip("no FIFOs on Windows") }
