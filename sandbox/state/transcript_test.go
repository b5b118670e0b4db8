package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTranscriptFile(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const id = "abcd1234"
	if _, err := s.ReadTranscript(id); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("read before write: %v, want ErrNoRecord", err)
	}
	long := strings.Repeat("x", TranscriptMax) + "the end"
	if err := s.WriteRecord(Record{ID: id}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteTranscript(id, long); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadTranscript(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != TranscriptMax || !strings.HasSuffix(got, "the end") {
		t.Errorf("read %d bytes ending %q, want the last %d", len(got), got[len(got)-7:], TranscriptMax)
	}
	// A file grown beyond the cap (not by this package) is read from its end.
	p := filepath.Join(s.Dir(), "sandboxes", id+".log")
	if err := os.WriteFile(p, []byte(long+long), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ReadTranscript(id); len(got) != TranscriptMax {
		t.Errorf("read %d bytes of an oversized file, want %d", len(got), TranscriptMax)
	}
	if err := s.RemoveRecord(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("transcript left after RemoveRecord: %v", err)
	}
	for _, bad := range []string{"../x", "ABCD1234", ""} {
		if err := s.WriteTranscript(bad, "x"); err == nil {
			t.Errorf("WriteTranscript(%q) accepted", bad)
		}
	}
}
