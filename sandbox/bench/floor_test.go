package bench

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestFloorOf(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	f := floorOf([]floorSample{
		{ping: ms(0.5), attach: ms(1.4), command: ms(1.1)},
		{ping: ms(0.3), attach: ms(1.2), command: ms(0.9)},
		{ping: ms(0.4), attach: ms(1.3), command: ms(1.0)},
	}, "")
	if f.N != 3 || f.Ping != ms(0.4) || f.Attach != ms(1.3) || f.Command != ms(1.0) || f.Total() != ms(1.7) {
		t.Fatalf("floorOf = %+v, want the medians 0.4, 1.3, 1.0 ms of 3", f)
	}
	if got := f.line(ms(50)); !strings.Contains(got, "= 1.70 ms, 0.034 of docker exec true") {
		t.Errorf("line = %q", got)
	}
	none := floorOf(nil, "the floor's probe did not start: no engine")
	if none.N != 0 || !strings.Contains(none.line(ms(50)), "not measured (the floor's probe did not start: no engine)") {
		t.Errorf("no samples: %+v, %q", none, none.line(ms(50)))
	}
}

// The probe reads the engine's multiplexed stream: an answer split over
// chunks, and python3's stderr ending the probe.
func TestFloorProbeRound(t *testing.T) {
	chunk := func(stream byte, s string) []byte {
		h := []byte{stream, 0, 0, 0, 0, 0, 0, byte(len(s))}
		return append(h, s...)
	}
	for _, tc := range []struct {
		name    string
		answer  [][]byte
		command time.Duration
		wantErr string
	}{
		{"one chunk", [][]byte{chunk(1, "917\n")}, 917 * time.Microsecond, ""},
		{"split", [][]byte{chunk(1, "1"), chunk(1, "204\n")}, 1204 * time.Microsecond, ""},
		{"stderr", [][]byte{chunk(2, "Traceback")}, 0, `python3 said "Traceback"`},
		{"not a number", [][]byte{chunk(1, "x\n")}, 0, `answered "x\n"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, theirs := net.Pipe()
			defer ours.Close()
			defer theirs.Close()
			go func() {
				line := make([]byte, 3)
				if _, err := io.ReadFull(theirs, line); err != nil || string(line) != "go\n" {
					return
				}
				for _, c := range tc.answer {
					if _, err := theirs.Write(c); err != nil {
						return
					}
				}
			}()
			p := &floorProbe{conn: ours, rd: bufio.NewReader(ours)}
			_, command, err := p.round()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || command != tc.command {
				t.Fatalf("command %v, err %v; want %v", command, err, tc.command)
			}
		})
	}
}
