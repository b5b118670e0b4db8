// Package hostfs is the fence between a tool call and the user's own disk.
// Every host path an AI client names goes through it, and everything that
// comes out of a sandbox is treated as hostile.
//
// The deny lists (Fence.Deny for copy_in, Fence.WriteDeny for copy_out)
// are compared by identity, not by name: each is resolved per call to the
// device and inode (volume serial and file index on Windows) of what it
// names, and every file and directory a copy opens, and every directory
// above it, is compared through the handle the copy holds; names are
// compared as a second guard (see identity.go).
//
// copy_in reads only below the configured read roots and never what
// files.read_deny names. It walks the tree through an os.Root opened on the
// read root, one directory handle at a time, and checks that each directory
// and file it opens is the one it planned, so a directory swapped for a
// symlink during the copy is refused rather than followed.
//
// copy_out writes only below the write root, and every host-side step goes
// through an os.Root opened on it (openat2 RESOLVE_BENEATH on Linux): the
// kernel, not a path checked earlier, keeps each step beneath it. It stages
// the copy next to its destination inside that root, moves it into place
// at the end (so a failed copy leaves nothing), never overwrites unless
// asked, never sets an executable bit, never makes a device, and makes no
// symlink unless UnpackOptions.Links allows those that resolve inside the
// copy; the others are listed in UnpackStats.SkippedLinks.
//
//	f := hostfs.Fence{ReadRoots: []string{"/home/me"}, WriteRoot: "/home/me/Downloads/mcp-sandbox", MaxBytes: 100 << 20}
//	src, err := f.ReadPath("~/project")              // refused outside the read roots
//	plan, err := f.Plan(ctx, src, opts)               // size-checked before a byte is sent
//	root, dest, err := f.WritePath("results", "")     // below the write root
//	st, err := f.Unpack(ctx, archive, root, dest, hostfs.UnpackOptions{})
//
// Imports: none
package hostfs
