package memtrim

import (
	"os"
	"strings"
	"testing"
)

const smapsSample = `00400000-00404000 r--p 00000000 fe:00 1 /opt/app
Rss:                  16 kB
Anonymous:             0 kB
00404000-0158e000 r-xp 00004000 fe:00 1 /opt/app
Rss:               17960 kB
Anonymous:             0 kB
0158e000-02a6c000 r--p 0118e000 fe:00 1 /opt/app
Rss:               21256 kB
Anonymous:             0 kB
02a6c000-02a6d000 r--p 0266b000 fe:00 1 /opt/app
Rss:                   4 kB
Anonymous:             4 kB
02a6d000-0323a000 rw-p 0266c000 fe:00 1 /opt/app
Rss:                6612 kB
Anonymous:           268 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:00 2 /usr/lib/libother.so
Rss:                1024 kB
Anonymous:             0 kB
7f0000200000-7f0000300000 r-xp 00000000 fe:00 3 /opt/app
Rss:                   0 kB
Anonymous:             0 kB
`

// TestCleanMappings: only the read-only private mappings of the matched
// file that have resident pages and none of their own are dropped; a
// RELRO page written by relocation (Anonymous), the data (rw-p) and other
// files are not.
func TestCleanMappings(t *testing.T) {
	got := cleanMappings([]byte(smapsSample), func(p string) bool { return p == "/opt/app" })
	want := []mapping{{0x400000, 0x404000, 16}, {0x404000, 0x158e000, 17960}, {0x158e000, 0x2a6c000, 21256}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// exeRSS is the resident KiB of the test binary's read-only mappings.
func exeRSS(t *testing.T) int64 {
	exe, _ := os.Readlink("/proc/self/exe")
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	in := false
	for _, line := range strings.Split(string(smaps), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.Contains(k, " ") {
			if in && k == "Rss" {
				n += kibOf(v)
			}
			continue
		}
		f := strings.Fields(line)
		in = len(f) >= 6 && strings.Join(f[5:], " ") == exe && (f[1] == "r-xp" || f[1] == "r--p")
	}
	return n
}

// TestResidentFile: statm's third field, in bytes, read without
// allocating (the trimmer samples it every 2 s).
func TestResidentFile(t *testing.T) {
	if got := statmShared([]byte("9000 2500 1234 2000 0 700 0\n")); got != 1234 {
		t.Errorf("statmShared = %d, want 1234", got)
	}
	read := residentFile()
	if n := read(); n < 64<<10 {
		t.Errorf("resident file pages: %d bytes, want the test binary's at least", n)
	}
	if a := testing.AllocsPerRun(10, func() { read() }); a != 0 {
		t.Errorf("reading statm allocates %.0f times", a)
	}
}
