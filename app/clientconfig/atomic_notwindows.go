//go:build !windows

package clientconfig

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner of old, so that an installer running as root
// does not leave a person's config readable only by root. Without the
// privilege to do so it does nothing, as the file is then ours already.
func keepOwner(f *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
