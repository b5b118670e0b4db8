package memtrim

import (
	"os"
	"testing"
)

// TestDropImageReturnsExecutablePages: the test binary's code and
// read-only data are resident after its start; dropImage hands them back,
// so the resident pages of those mappings drop to what running on (the
// reading of smaps itself) faults in again — in a binary this small a
// good part, as the kernel maps up to 64 KiB around each fault.
func TestDropImageReturnsExecutablePages(t *testing.T) {
	before := imageRSS(t)
	if before < 512 {
		t.Skipf("only %d KiB of the executable's read-only mappings resident", before)
	}
	dropped := dropImage()
	after := imageRSS(t)
	if dropped < before/2 {
		t.Errorf("dropImage reported %d KiB dropped of %d KiB resident", dropped, before)
	}
	if after > before*4/5 {
		t.Errorf("the executable's read-only mappings hold %d KiB after dropImage, %d KiB before", after, before)
	}
	t.Logf("executable's r-xp and r--p resident: %d KiB before, %d KiB after", before, after)
}

// TestImageMappingsSkipsWrittenAndWritable: only the executable's clean
// read-only private mappings are candidates; not its data (rw-p), not a
// read-only mapping that holds written pages (a dynamic binary's RELRO),
// not another file's, not one with nothing resident.
func TestImageMappingsSkipsWrittenAndWritable(t *testing.T) {
	const smaps = `00400000-00500000 r-xp 00000000 08:01 42 /usr/bin/mcp sandbox
Size:               1024 kB
Rss:                 900 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
00500000-00600000 r--p 00100000 08:01 42 /usr/bin/mcp sandbox
Rss:                 800 kB
Anonymous:             0 kB
00600000-00610000 r--p 00200000 08:01 42 /usr/bin/mcp sandbox
Rss:                  64 kB
Anonymous:            64 kB
00610000-00620000 rw-p 00210000 08:01 42 /usr/bin/mcp sandbox
Rss:                  64 kB
Anonymous:             4 kB
00620000-00630000 r--p 00220000 08:01 42 /usr/bin/mcp sandbox
Rss:                   0 kB
Anonymous:             0 kB
7f0000000000-7f0000100000 r-xp 00000000 08:01 7 /usr/lib/libc.so.6
Rss:                 500 kB
Anonymous:             0 kB
7f0000100000-7f0000200000 rw-p 00000000 00:00 0
Rss:                 100 kB
Anonymous:           100 kB
`
	got := imageMappings([]byte(smaps), "/usr/bin/mcp sandbox")
	want := []mapping{{0x400000, 0x500000, 900}, {0x500000, 0x600000, 800}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("imageMappings = %+v, want %+v", got, want)
	}
}

// imageRSS is the resident KiB of the running executable's read-only
// private mappings.
func imageRSS(t *testing.T) int64 {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, m := range imageMappings(smaps, exe) {
		n += m.rssKiB
	}
	return n
}
