package record

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

func TestRecorder(t *testing.T) {
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rc := New(st, slog.New(slog.DiscardHandler))
	read := func(id string) (state.Record, error) { return st.ReadRecord(id) }

	// The first record goes out soon (in the background), not beside
	// the update: recordSettle after it.
	put := time.Now()
	rc.Put(state.Record{ID: "aaaaaaaa", Client: "one"})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if r, err := read("aaaaaaaa"); err == nil && r.Client == "one" {
			if d := time.Since(put); d < recordSettle {
				t.Errorf("the first record was written %v after the update, want at least %v", d, recordSettle)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first record was not written")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Updates right after are coalesced: the newest one is written later.
	rc.Put(state.Record{ID: "aaaaaaaa", Client: "two"})
	rc.Put(state.Record{ID: "aaaaaaaa", Client: "three"})
	if r, _ := read("aaaaaaaa"); r.Client != "one" {
		t.Errorf("an update was written at once: %q", r.Client)
	}
	rc.Flush()
	if r, _ := read("aaaaaaaa"); r.Client != "three" {
		t.Errorf("after flush the record says %q, want three", r.Client)
	}
	// A removed record is not written again by a pending update.
	rc.Put(state.Record{ID: "aaaaaaaa", Client: "four"})
	rc.Remove("aaaaaaaa")
	rc.Put(state.Record{ID: "aaaaaaaa", Client: "five"})
	rc.Flush()
	if _, err := read("aaaaaaaa"); !errors.Is(err, state.ErrNoRecord) {
		t.Errorf("a removed record came back: %v", err)
	}
}
