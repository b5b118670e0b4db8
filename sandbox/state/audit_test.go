package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditFollowsItsFile: the log this process keeps open between
// entries is the one its path names at each write: after another server
// rotated it (renamed it to audit.jsonl.1) or a person removed it, the
// next entry goes to a new audit.jsonl, and the rotated file keeps only
// what was written before.
func TestAuditFollowsItsFile(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(st.Dir(), "audit.jsonl")
	write := func(summary string) {
		t.Helper()
		if err := st.Audit(AuditEntry{Tool: "sandbox_exec", Summary: summary}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(st.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write("one")
	// Another server rotates the log and writes the first entry of the
	// new one.
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"tool":"run_code","summary":"theirs","pid":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write("two")
	if got := read("audit.jsonl.1"); !strings.Contains(got, `"one"`) || strings.Contains(got, `"two"`) {
		t.Fatalf("the rotated log holds %q; want the first entry only", got)
	}
	if got := read("audit.jsonl"); !strings.Contains(got, `"two"`) || strings.Contains(got, `"one"`) {
		t.Fatalf("the new log holds %q; want the other server's entry and the second", got)
	}
	if err := os.Remove(p); err != nil { // a person cleared it
		t.Fatal(err)
	}
	write("three")
	if got := read("audit.jsonl"); !strings.Contains(got, `"three"`) || strings.Contains(got, `"two"`) {
		t.Fatalf("after removal the log holds %q; want the third entry only", got)
	}
	// Another store (another state directory) in the same process has a
	// log of its own.
	other, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Audit(AuditEntry{Tool: "run_code", Summary: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	write("four")
	if got := read("audit.jsonl"); !strings.Contains(got, `"four"`) || strings.Contains(got, "elsewhere") {
		t.Fatalf("the log holds %q; want its own entries only", got)
	}
	entries, err := st.ReadAudit(0)
	if err != nil || len(entries) != 3 || entries[0].Summary != "four" || entries[1].Summary != "three" || entries[2].Summary != "one" {
		t.Fatalf("ReadAudit: %+v, %v; want four, three, then one from the rotated log (two went with the removed file)", entries, err)
	}
}
