package installplace

import (
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

const goos = "darwin"

func readOnlyFS(p string) bool {
	var st unix.Statfs_t
	return unix.Statfs(p, &st) == nil && st.Flags&unix.MNT_RDONLY != 0
}

// MoveToApplications copies the bundle of a transient place to
// /Applications (an older copy there is replaced), clears the quarantine
// of the copy (the user already opened this one), and returns the new
// bundle's path. The caller then calls Relaunch and quits.
func MoveToApplications(p Place) (string, error) {
	dest := p.Destination()
	if !p.Transient() || dest == "" {
		return "", fmt.Errorf("installplace: %s is not in a bundle to move", p.Exe)
	}
	tmp := fmt.Sprintf("%s.moving-%d", dest, os.Getpid())
	if out, err := exec.Command("/usr/bin/ditto", p.Bundle, tmp).CombinedOutput(); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("installplace: copy to %s: %v: %s", ApplicationsDir, err, out)
	}
	_ = exec.Command("/usr/bin/xattr", "-dr", "com.apple.quarantine", tmp).Run()
	if err := os.RemoveAll(dest); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("installplace: replace %s: %w", dest, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return "", fmt.Errorf("installplace: %w", err)
	}
	return dest, nil
}

// Relaunch starts a new instance of the bundle; the caller quits.
func Relaunch(bundle string) error {
	return exec.Command("/usr/bin/open", "-n", bundle).Run()
}
