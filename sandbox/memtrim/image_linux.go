package memtrim

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// dropImage hands back the resident pages of the executable's own clean
// read-only mappings — its code (r-xp) and read-only data (r--p) — and
// returns how many KiB were resident in them. Package initialisation
// touches most of both (client-go's API types alone touch 16 MB of them)
// and the kernel counts every touched page in the process's resident set
// until memory runs short. The pages stay in the page cache and fault
// back in from it when used again.
//
// Only private mappings of the executable's file that hold no page of
// their own (smaps' Anonymous: 0, so nothing was ever written to them,
// as relocations write to a dynamic binary's RELRO) are dropped:
// MADV_DONTNEED on those loses nothing. Writable mappings (rw-p: the data
// and bss) are never touched.
func dropImage() (kib int64) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	for _, m := range imageMappings(smaps, exe) {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno == 0 {
			kib += m.rssKiB
		}
	}
	return kib
}

// mapping is one of the executable's mappings that dropImage may drop.
type mapping struct {
	start, end uintptr
	rssKiB     int64
}

// imageMappings parses smaps for exe's read-only private mappings (r-xp
// and r--p) with resident pages and none of their own.
func imageMappings(smaps []byte, exe string) []mapping {
	var out []mapping
	var cur *mapping // the current mapping, if it is a candidate
	var anon bool
	flush := func() {
		if cur != nil && !anon && cur.rssKiB > 0 {
			out = append(out, *cur)
		}
		cur, anon = nil, false
	}
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		if m, ok := mappingHeader(line, exe); ok || isHeader(line) {
			flush()
			if ok {
				cur = &m
			}
			continue
		}
		if cur == nil {
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); ok {
			cur.rssKiB = kib(v)
		} else if v, ok := strings.CutPrefix(line, "Anonymous:"); ok && kib(v) != 0 {
			anon = true
		}
	}
	flush()
	return out
}

// isHeader reports whether an smaps line starts a mapping ("start-end
// perms offset dev inode [path]") rather than being one of its fields.
func isHeader(line string) bool {
	f, _, _ := strings.Cut(line, " ")
	return strings.Contains(f, "-") && !strings.HasSuffix(f, ":")
}

// mappingHeader parses a mapping's header line if it maps exe read-only
// and private.
func mappingHeader(line, exe string) (mapping, bool) {
	f := strings.Fields(line)
	if len(f) < 6 || (f[1] != "r-xp" && f[1] != "r--p") || strings.Join(f[5:], " ") != exe {
		return mapping{}, false
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return mapping{}, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return mapping{}, false
	}
	return mapping{start: uintptr(start), end: uintptr(end)}, true
}

// kib parses an smaps field's value ("  1234 kB").
func kib(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	return n
}
