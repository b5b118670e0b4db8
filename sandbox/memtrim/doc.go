// Package memtrim hands a long-running process's free heap back to the
// operating system once the process has gone quiet.
//
// Go's collector frees garbage, but the pages stay with the process until
// the background scavenger returns them, and it keeps about the heap goal
// (at least 4 MB) for the next burst. For the MCP server, which spends most
// of its life waiting for the next tool call, that is most of its heap:
// start-up leaves about 3 MB of freed pages behind a live heap of under
// 2 MB. Run watches the allocation rate and, after a quiet spell, collects
// once and releases every free page (debug.FreeOSMemory), once per quiet
// spell. A busy process is left alone; the next burst simply takes the
// pages again.
//
// On Linux the same release hands back the resident pages of the
// executable's code and read-only data, which package initialisation
// touches (client-go's alone: 16 MB) and the kernel counts in the
// process's resident set until memory runs short; they stay in the page
// cache and fault back in when used. What a quiet process runs now and
// then (the warm pool shrinking, usage sampling of a live sandbox, the
// runtime's forced collection every 2 minutes) faults some back, 64 KiB
// around each page touched: the tick after a release drops them again,
// and so does a quiet tick, at most every 30 s, that finds 1 MiB more
// file pages resident (statm) than the first quiet tick after the last
// drop, without a collection. macOS and Windows leave the clean pages of
// an executable out of the figure they show for a process.
// DropMapped does the same for any clean file mapping a caller names:
// the tray and the window drop their own, and the GL driver's.
//
//	go memtrim.Run(ctx, memtrim.Options{Log: log})
//
// Imports: none
package memtrim
