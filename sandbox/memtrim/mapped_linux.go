package memtrim

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// DropMapped hands back the resident pages of the process's clean,
// read-only file mappings whose file match accepts (the executable's code
// and read-only data; a GL driver's code) and returns how many KiB were
// resident in them. Start-up touches most of them and the kernel counts
// every touched page (whole large folios, 2 MB at a time) in the process's
// resident set until memory runs short; an idle process uses few of them
// again. They stay in the page cache and fault back in from it when used.
//
// Only private mappings that are read-only (r-xp, r--p) and hold no page
// of their own (smaps' Anonymous: 0: nothing was ever written to them, as
// relocations write to RELRO) are dropped: MADV_DONTNEED on those loses
// nothing. Call it while the process is quiet, with match naming files
// that stay mapped for the process's life.
func DropMapped(match func(path string) bool) (kib int64) {
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	for _, m := range cleanMappings(smaps, match) {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno == 0 {
			kib += m.rssKiB
		}
	}
	return kib
}

// Executable reports whether path is this process's executable, for
// DropMapped.
func Executable() func(path string) bool {
	exe, err := os.Readlink("/proc/self/exe")
	return func(path string) bool { return err == nil && path == exe }
}

// mapping is a mapping DropMapped may drop.
type mapping struct {
	start, end uintptr
	rssKiB     int64
}

// cleanMappings parses smaps for the read-only private mappings of files
// match accepts, with resident pages and none of their own.
func cleanMappings(smaps []byte, match func(string) bool) []mapping {
	var out []mapping
	var cur *mapping // the current mapping, if it is a candidate
	anon := false
	flush := func() {
		if cur != nil && !anon && cur.rssKiB > 0 {
			out = append(out, *cur)
		}
		cur, anon = nil, false
	}
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.Contains(k, " ") {
			switch {
			case cur == nil:
			case k == "Rss":
				cur.rssKiB = kibOf(v)
			case k == "Anonymous" && kibOf(v) != 0:
				anon = true
			}
			continue
		}
		flush()
		cur = candidate(line, match)
	}
	flush()
	return out
}

// candidate parses a mapping's header line ("start-end perms offset dev
// inode path") if it maps a file match accepts, read-only and private.
func candidate(header string, match func(string) bool) *mapping {
	f := strings.Fields(header)
	if len(f) < 6 || (f[1] != "r-xp" && f[1] != "r--p") || !match(strings.Join(f[5:], " ")) {
		return nil
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if !ok || err1 != nil || err2 != nil || end <= start {
		return nil
	}
	return &mapping{start: uintptr(start), end: uintptr(end)}
}

// kibOf parses an smaps field's value ("  1234 kB").
func kibOf(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	return n
}

// statm is /proc/self/statm, open for the process's life so that reading
// it allocates nothing; nil if it cannot be opened.
var statm = sync.OnceValue(func() *os.File {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return nil
	}
	return f
})

// residentFile returns a reader of the process's resident file pages in
// bytes (statm's third field: file and shared memory pages), 0 if unknown.
func residentFile() func() uint64 {
	page := uint64(os.Getpagesize())
	var buf [128]byte
	return func() uint64 {
		f := statm()
		if f == nil {
			return 0
		}
		n, _ := f.ReadAt(buf[:], 0)
		return statmShared(buf[:n]) * page
	}
}

// statmShared parses statm's third field ("size resident shared ...").
func statmShared(b []byte) uint64 {
	for range 2 {
		i := bytes.IndexByte(b, ' ')
		if i < 0 {
			return 0
		}
		b = b[i+1:]
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}
