package hostfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// handleIdent reads the identity of an open file (volume serial number and
// file index) with GetFileInformationByHandle, through the handle, never
// by its name: a short name, another case, a \\?\ form or an alternate
// data stream's name all lead to the same file and the same identity.
func handleIdent(fh *os.File) (ident, error) {
	return winIdent(windows.Handle(fh.Fd()))
}

func winIdent(h windows.Handle) (ident, error) {
	var bi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bi); err != nil {
		return ident{}, err
	}
	return ident{
		id:    fileID{dev: uint64(bi.VolumeSerialNumber), ino: uint64(bi.FileIndexHigh)<<32 | uint64(bi.FileIndexLow)},
		nlink: uint64(bi.NumberOfLinks),
		dir:   bi.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0,
	}, nil
}

// infoIdent: a FileInfo from Lstat holds no file index on Windows; the
// fence reads it through a handle instead.
func infoIdent(fs.FileInfo) (ident, bool) { return ident{}, false }

// entryIdent opens a walked entry (not following a reparse point) to read
// its identity.
func entryIdent(p string, _ fs.DirEntry) (ident, bool) {
	h, err := openForIdent(p)
	if err != nil {
		return ident{}, false
	}
	defer windows.CloseHandle(h)
	id, err := winIdent(h)
	return id, err == nil
}

// openForIdent opens p for its attributes only, sharing everything, and
// without following a final reparse point.
func openForIdent(p string) (windows.Handle, error) {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return 0, err
	}
	return windows.CreateFile(name, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
}

// ancestry returns the identities of the directory open as fh and of every
// directory above it: the handle's final path (its true, long, cased name,
// from GetFinalPathNameByHandle) climbed to the volume's root.
func ancestry(fh *os.File) ([]ident, error) {
	first, err := handleIdent(fh)
	if err != nil {
		return nil, err
	}
	ids := []ident{first}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(windows.Handle(fh.Fd()), &buf[0], uint32(len(buf)), 0)
	if err != nil {
		return nil, err
	}
	if int(n) > len(buf) {
		return nil, fmt.Errorf("path longer than %d characters", len(buf))
	}
	p := windows.UTF16ToString(buf[:n])
	for up := filepath.Dir(p); up != p; p, up = up, filepath.Dir(up) {
		h, err := openForIdent(up)
		if err != nil {
			return nil, err
		}
		id, err := winIdent(h)
		windows.CloseHandle(h)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// pathIdent is the identity of the file p names (following links).
func pathIdent(p string) (ident, error) {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return ident{}, err
	}
	h, err := windows.CreateFile(name, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return ident{}, err
	}
	defer windows.CloseHandle(h)
	return winIdent(h)
}
