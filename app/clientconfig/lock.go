package clientconfig

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// lockSuffix names our lock file beside a config file. It is not the bare
// "<file>.lock" because some clients guard their own files with a directory
// of that name (the proper-lockfile convention), and taking or removing
// theirs would break their locking.
const lockSuffix = ".mcp-sandbox.lock"

// lockConfig takes an exclusive lock that keeps two of our own writers (the
// tray and the CLI, say) from editing the same file at once. It waits until
// ctx is done. The lock file is removed on release.
func lockConfig(ctx context.Context, file string) (release func(), err error) {
	path := file + lockSuffix
	for {
		fl := flock.New(path, flock.SetPermissions(0o600))
		ok, err := fl.TryLockContext(ctx, 50*time.Millisecond)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", file, err)
		}
		if !ok {
			return nil, fmt.Errorf("lock %s: %w", file, ctx.Err())
		}
		// The writer before us removes the file while it still holds the
		// lock; if we locked that removed file, the lock guards nothing and
		// we go again with a fresh one.
		held, err1 := fl.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return func() {
				_ = os.Remove(path) // on Windows this fails while open; the file then stays
				_ = fl.Unlock()
			}, nil
		}
		_ = fl.Unlock()
	}
}
