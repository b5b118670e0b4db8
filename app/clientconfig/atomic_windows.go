package clientconfig

import (
	"io/fs"
	"os"
)

// keepOwner does nothing on Windows, where a new file takes the
// directory's inherited permissions.
func keepOwner(*os.File, fs.FileInfo) {}

// syncDir does nothing on Windows, which cannot sync a directory; the
// rename (MoveFileEx) is itself written through.
func syncDir(string) {}
