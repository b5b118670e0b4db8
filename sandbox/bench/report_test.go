package bench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestReportText(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	rep := Report{
		Rounds: 20, Image: "mcp-sandbox-test/python:3", Docker: "20.10.24", CPUs: 2,
		When: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC),
		Comparisons: []Comparison{
			{Name: Warm, Ours: Stats{Median: ms(2.1), P95: ms(3.4)}, Baseline: Stats{Median: ms(62), P95: ms(80)}, Ratio: 0.034, P95Ratio: 0.0425, Target: 0.15, TargetMedian: ms(2)},
			{Name: Create, Ours: Stats{Median: ms(30), P95: ms(41)}, Baseline: Stats{Median: ms(200), P95: ms(260)}, Ratio: 0.15, P95Ratio: 0.158, Target: 0.10},
			{Name: OneShot, Ours: Stats{Median: ms(12), P95: ms(20)}, Baseline: Stats{Median: ms(250), P95: ms(300)}, Ratio: 0.048, P95Ratio: 0.067, Target: 0.40},
			{Name: ExecTrue, Ours: Stats{Median: ms(2.2), P95: ms(3)}, Baseline: Stats{Median: ms(50), P95: ms(60)}, Ratio: 0.044, P95Ratio: 0.05, Target: 0.03},
			{Name: List, Ours: Stats{Median: ms(4.2), P95: ms(6)}, Baseline: Stats{Median: ms(2100), P95: ms(2300)}, Ratio: 0.002, P95Ratio: 0.0026, TargetMedian: ms(20)},
		},
		PoolClaims: 40, IdleRSSKB: 18 << 10, RSS10KB: 24 << 10,
		WarmBreakdown:     Breakdown{Inside: "interpreter", N: 20, Total: ms(2.1), Transport: ms(0.4), Engine: ms(0.3), Agent: ms(1.1), Interpreter: ms(0.3)},
		ExecTrueBreakdown: Breakdown{Inside: "command", N: 20, Total: ms(2.2), Transport: ms(0.5), Engine: ms(0.2), Agent: ms(0.4), Interpreter: ms(1.1)},
		ExecTrueFloor:     Floor{N: 20, Ping: ms(0.4), Attach: ms(1.3), Command: ms(1.0)},
		Idle:              Memory{RSSKB: 18 << 10, AnonKB: 6 << 10, FileKB: 12 << 10, Released: true},
		Concurrent:        Concurrent{N: 20, OK: 20, Wall: 2500 * time.Millisecond},
		Surface:           Surface{ToolsListBytes: 8366, ToolsCoreBytes: 5026, InstructionsBytes: 457},
		Floods: []Flood{
			{Name: FloodReads, What: "12 × 16 MiB", PeakKB: 175 << 10, BoundKB: readsBoundKB, Took: 24 * time.Second},
			{Name: FloodFigures, What: "16 × 16 MiB + 200 small", PeakKB: 160 << 10, BoundKB: floodBoundKB, Took: 2 * time.Second},
			{Name: FloodOutput, What: "4 × yes for 5 s", PeakKB: 58 << 10, BoundKB: floodBoundKB, Took: 5 * time.Second},
			{Name: FloodSlow, What: "300 connections", PeakKB: 29 << 10, BoundKB: floodBoundKB, Latency: ms(68), LatencyBound: slowAnswer,
				Note: "300 of 300 opened; 300 closed or answered 401 within 20s"},
			{Name: FloodStalled, What: "50 readers of 32 MiB", PeakKB: 70 << 10, BoundKB: floodBoundKB, LatencyBound: freshPage, Err: "GET: timeout"},
		},
	}
	var got bytes.Buffer
	if err := rep.WriteText(&got); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.txt")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

func TestParseStatus(t *testing.T) {
	status := "Name:\tmcp-sandbox\nVmHWM:\t   21000 kB\nVmRSS:\t   16728 kB\nRssAnon:\t    5620 kB\nRssFile:\t   11108 kB\nRssShmem:\t       0 kB\n"
	got, err := parseStatus(status)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Memory{RSSKB: 16728, AnonKB: 5620, FileKB: 11108}); got != want {
		t.Errorf("parseStatus = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"VmRSS:\t 1 kB\n", "VmRSS:\t x kB\nRssAnon:\t 1 kB\nRssFile:\t 1 kB\n"} {
		if m, err := parseStatus(bad); err == nil {
			t.Errorf("parseStatus(%q) = %+v, want an error", bad, m)
		}
	}
}

// TestPeakMeter: the meter sees memory this process takes and gives back
// within its span.
func TestPeakMeter(t *testing.T) {
	m := startPeak(os.Getpid())
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = 1
	}
	time.Sleep(50 * time.Millisecond)
	b = nil
	if kb := m.end(); kb < 64<<10 {
		t.Errorf("peak %d kB over a span that touched 64 MiB", kb)
	}
}
