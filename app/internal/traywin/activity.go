package traywin

import (
	"os"
	"path/filepath"
	"time"
)

// ActivitySeenFile is the file in the state directory the window writes
// when it opens and whenever its Activity tab is shown: the person has
// seen the failed calls, and the tray clears its badge.
const ActivitySeenFile = "activity-seen"

// MarkActivitySeen writes ActivitySeenFile (the window calls it).
func MarkActivitySeen(stateDir string) error {
	p := filepath.Join(stateDir, ActivitySeenFile)
	return os.WriteFile(p, []byte(time.Now().UTC().Format(time.RFC3339Nano)), 0o600)
}
