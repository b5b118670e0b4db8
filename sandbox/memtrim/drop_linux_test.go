package memtrim

import "testing"

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
