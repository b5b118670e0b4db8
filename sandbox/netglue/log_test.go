package netglue

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// TestNetLogBounded: a flood of connections keeps only the newest lines
// for the logs resource, oldest first, and says how many there were; a
// host the sandbox named is capped and cleaned.
func TestNetLogBounded(t *testing.T) {
	var l Log
	if l.String() != "" {
		t.Fatalf("empty log says %q", l.String())
	}
	start := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	for i := range 100 {
		l.Add(netproxy.Record{Start: start, Method: "CONNECT", Host: fmt.Sprintf("h%d.example", i), Port: 443, Reason: "no"})
	}
	l.Add(netproxy.Record{Start: start, Method: "GET", Host: strings.Repeat("x", 5000) + "\x1b[2J", Port: 80, Allowed: true,
		BytesIn: 5, BytesOut: 7, Duration: 1500 * time.Millisecond})
	lines := strings.Split(strings.TrimSuffix(l.String(), "\n"), "\n")
	if len(lines) != logLines+1 || lines[0] != "=== network: the last 64 of 101 connections" {
		t.Fatalf("%d lines, heading %q", len(lines), lines[0])
	}
	if want := "2026-11-26T01:00:00Z CONNECT h37.example:443 refused: no (0 B in, 0 B out, 0 ms)"; lines[1] != want {
		t.Errorf("oldest line kept %q, want %q", lines[1], want)
	}
	last := lines[len(lines)-1]
	if len(last) > 600 || strings.Contains(last, "\x1b") || !strings.HasSuffix(last, ":80 allowed (5 B in, 7 B out, 1500 ms)") {
		t.Errorf("newest line %q", last)
	}
}
