// Package hostfs is the fence between a tool call and the user's own disk.
// Every host path an AI client names goes through it: copy_in reads only
// below the configured read roots, and copy_out writes only below the write
// root, never through a symlink, never creating one that points out, never
// a device, never an executable bit, never over an existing file unless
// asked, and atomically, so that a failed copy leaves nothing behind.
//
//	f := hostfs.Fence{ReadRoots: []string{"/home/me"}, WriteRoot: "/home/me/Downloads/mcp-sandbox", MaxBytes: 100 << 20}
//	src, err := f.ReadPath("~/project")          // refused outside the read roots
//	n, err := f.Pack(ctx, src, "project", w, opts) // a tar stream, size-checked first
package hostfs
