package memtrim

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestDropImageReturnsExecutablePages: the test binary's code and
// read-only data are resident after its start; dropImage hands them back,
// so the resident pages of those mappings drop to what running on (the
// reading of smaps itself) faults in again — in a binary this small a
// good part, as the kernel maps up to 64 KiB around each fault.
func TestDropImageReturnsExecutablePages(t *testing.T) {
	before := exeRSS(t)
	if before < 512 {
		t.Skipf("only %d KiB of the executable's read-only mappings resident", before)
	}
	dropped := dropImage()
	after := exeRSS(t)
	if dropped < before/2 {
		t.Errorf("dropImage reported %d KiB dropped of %d KiB resident", dropped, before)
	}
	if after > before*4/5 {
		t.Errorf("the executable's read-only mappings hold %d KiB after dropImage, %d KiB before", after, before)
	}
	t.Logf("executable's r-xp and r--p resident: %d KiB before, %d KiB after", before, after)
}

// TestTickDropsImageFaultedBack, on the real process: pages of the
// executable faulted in after a drop (here through a private read-only
// mapping of the test binary, read through, which DropMapped drops as it
// drops the executable's own) raise statm's figure over the baseline, and
// the next quiet tick ImageEvery after the drop hands them back.
func TestTickDropsImageFaultedBack(t *testing.T) {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	// Every tick quiet, none worth a collection: only the image moves.
	tr := newTrimmer(Options{Every: time.Second, ImageEvery: time.Second, Quiet: 1 << 40, MinReclaim: 1 << 62})
	tr.tick() // the rate's origin
	tr.tick() // the baseline
	if !tr.based {
		t.Fatal("no baseline on the first quiet tick")
	}
	var sum byte
	for i := 0; i < len(m); i += os.Getpagesize() {
		sum += m[i]
	}
	grown := readSample()().File
	if grown < tr.file+2<<20 {
		t.Skipf("reading %d KiB of the binary raised the resident file pages from %d to %d KiB only", len(m)>>10, tr.file>>10, grown>>10)
	}
	tr.tick()
	if after := readSample()().File; after > grown-(grown-tr.file)/2 {
		t.Errorf("resident file pages: %d KiB at the baseline, %d KiB after reading the binary, %d KiB after the tick (sum %d)", tr.file>>10, grown>>10, after>>10, sum)
	}
}
