package bench

import (
	"strings"
	"testing"
	"time"
)

func TestFloorOf(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	f := floorOf([]floorSample{
		{ping: ms(0.5), attach: ms(1.4), spawn: ms(1.1)},
		{ping: ms(0.3), attach: ms(1.2), spawn: ms(0.9)},
		{ping: ms(0.4), attach: ms(1.3), spawn: ms(1.0)},
	}, "")
	if f.N != 3 || f.Ping != ms(0.4) || f.Attach != ms(1.3) || f.Spawn != ms(1.0) || f.Total() != ms(1.7) {
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
