package applog

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The helper process: when APPLOG_WRITER is set, the test binary writes
// numbered lines to a shared log instead of running tests.
const (
	writerEnv = "APPLOG_WRITER" // "<dir> <id> <lines> <max bytes> <keep>"
	lineLen   = 64
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(writerEnv); spec != "" {
		if err := writeLines(strings.Fields(spec)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeLines opens the shared log, says it is ready, waits until every
// writer is, and writes its lines: "<id> <seq>" padded to lineLen.
func writeLines(a []string) error {
	dir, id := a[0], a[1]
	lines, _ := strconv.Atoi(a[2])
	maxBytes, _ := strconv.ParseInt(a[3], 10, 64)
	keep, _ := strconv.Atoi(a[4])
	writers, _ := strconv.Atoi(a[5])
	w, err := Open(dir, "server", Options{MaxBytes: maxBytes, Keep: keep})
	if err != nil {
		return err
	}
	defer w.Close()
	if err := os.WriteFile(filepath.Join(dir, "ready-"+id), nil, 0o600); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		m, _ := filepath.Glob(filepath.Join(dir, "ready-*"))
		if len(m) == writers {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("writer %s: the others never became ready", id)
		}
		time.Sleep(time.Millisecond) // poll, leaving the CPU to the others
	}
	for i := range lines {
		l := fmt.Sprintf("%s %06d ", id, i)
		l += strings.Repeat("x", lineLen-1-len(l)) + "\n"
		if _, err := w.Write([]byte(l)); err != nil {
			return err
		}
	}
	return nil
}

// TestProcessesShareRotation: two processes writing one log (as two
// `mcp-sandbox serve` do) rotate it together: every rotated file holds
// exactly the limit (none rotated early by one process, none grown past
// it), and what is kept of each process's lines is its newest ones, in
// order, with no line lost or repeated in between.
func TestProcessesShareRotation(t *testing.T) {
	const lines, maxBytes, writers = 1500, 4096, 2
	for _, tc := range []struct {
		name string
		keep int
	}{
		{"every file kept", 100},
		{"oldest dropped", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var cmds []*exec.Cmd
			for id := range writers {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s w%d %d %d %d %d", writerEnv, dir, id, lines, maxBytes, tc.keep, writers))
				cmd.Stderr = os.Stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds = append(cmds, cmd)
			}
			for _, c := range cmds {
				if err := c.Wait(); err != nil {
					t.Fatalf("writer: %v", err)
				}
			}
			// Oldest file first: server.log.N … server.log.1, server.log.
			var files []string
			for i := tc.keep; i >= 1; i-- {
				files = append(files, filepath.Join(dir, "server.log."+strconv.Itoa(i)))
			}
			files = append(files, filepath.Join(dir, "server.log"))
			seen := map[string][]int{}
			for _, f := range files {
				fi, err := os.Stat(f)
				if os.IsNotExist(err) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				// Lines fill a file exactly, so one rotated when the next
				// line would not fit holds exactly the limit.
				if rotated := filepath.Base(f) != "server.log"; fi.Size() > maxBytes || rotated && fi.Size() != maxBytes {
					t.Errorf("%s has %d bytes, want %d (the current file: at most that)", filepath.Base(f), fi.Size(), maxBytes)
				}
				fh, err := os.Open(f)
				if err != nil {
					t.Fatal(err)
				}
				sc := bufio.NewScanner(fh)
				for sc.Scan() {
					var id string
					var seq int
					if _, err := fmt.Sscanf(sc.Text(), "%s %d", &id, &seq); err != nil || len(sc.Text()) != lineLen-1 {
						t.Fatalf("%s: torn line %q", filepath.Base(f), sc.Text())
					}
					seen[id] = append(seen[id], seq)
				}
				fh.Close()
			}
			if len(seen) == 0 {
				t.Fatal("nothing kept")
			}
			for id := range writers {
				got := seen[fmt.Sprintf("w%d", id)]
				if len(got) == 0 {
					// All its lines were older than the files kept: fine
					// when the other wrote on alone at the end.
					if tc.keep == 100 {
						t.Errorf("writer %d: nothing kept though every file was", id)
					}
					continue
				}
				first := got[0]
				for i, seq := range got {
					if seq != first+i {
						t.Fatalf("writer %d: line %d is %d, want %d (lost, repeated or out of order)", id, i, seq, first+i)
					}
				}
				if last := got[len(got)-1]; last != lines-1 {
					t.Errorf("writer %d: newest line kept is %d, want %d", id, last, lines-1)
				}
				if tc.keep == 100 && first != 0 {
					t.Errorf("writer %d: lines before %d lost though every file was kept", id, first)
				}
			}
		})
	}
}
