//go:build !linux

package supervisor

import "os/exec"

// dieWithParent: only Linux can tie a child's life to its parent's.
func dieWithParent(cmd *exec.Cmd) {}
