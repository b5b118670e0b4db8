package state

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
)

// TranscriptMax bounds a transcript file: the owning server keeps at most
// this much (its in-memory cap), and a reader reads no more.
const TranscriptMax = 256 << 10

// transcriptPath is <state dir>/sandboxes/<id>.log, beside the record.
func (s *Store) transcriptPath(id string) (string, error) {
	if !validID.MatchString(id) {
		return "", fmt.Errorf("transcript %q: invalid sandbox id", id)
	}
	return filepath.Join(s.dir, "sandboxes", id+".log"), nil
}

// WriteTranscript replaces sandbox id's transcript file atomically with
// text, cut to its last TranscriptMax bytes. The owning server writes it
// so that the window, another process, can show what ran.
func (s *Store) WriteTranscript(id, text string) error {
	p, err := s.transcriptPath(id)
	if err != nil {
		return err
	}
	if len(text) > TranscriptMax {
		text = text[len(text)-TranscriptMax:]
	}
	return atomicfile.WriteFile(p, []byte(text), 0o600)
}

// ReadTranscript returns sandbox id's transcript file as written, at most
// TranscriptMax bytes of it (its end), or ErrNoRecord when there is none.
// The text is the sandbox's output: the caller cleans it before showing it.
func (s *Store) ReadTranscript(id string) (string, error) {
	p, err := s.transcriptPath(id)
	if err != nil {
		return "", err
	}
	f, err := os.Open(p)
	if os.IsNotExist(err) {
		return "", fmt.Errorf("transcript of %s: %w", id, ErrNoRecord)
	}
	if err != nil {
		return "", fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > TranscriptMax {
		if _, err := f.Seek(st.Size()-TranscriptMax, io.SeekStart); err != nil {
			return "", fmt.Errorf("read transcript: %w", err)
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, TranscriptMax))
	if err != nil {
		return "", fmt.Errorf("read transcript: %w", err)
	}
	return string(data), nil
}

// removeTranscript deletes sandbox id's transcript file; a missing one is
// fine.
func (s *Store) removeTranscript(id string) error {
	p, err := s.transcriptPath(id)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove transcript: %w", err)
	}
	return nil
}
