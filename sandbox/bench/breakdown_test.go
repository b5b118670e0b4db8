package bench

import (
	"testing"
	"time"
)

// TestParseTiming reads the server's "tool call timing" debug line.
func TestParseTiming(t *testing.T) {
	line := `time=2026-11-29T00:36:21.906Z level=DEBUG msg="tool call timing" pid=11517 tool=run_code server_us=693 sandbox_us=574 interpreter_us=318`
	tool, got, ok := parseTiming(line)
	want := callTiming{Server: 693 * time.Microsecond, Sandbox: 574 * time.Microsecond, Interpreter: 318 * time.Microsecond}
	if !ok || tool != "run_code" || got != want {
		t.Errorf("parseTiming = %q, %+v, %v; want run_code, %+v, true", tool, got, ok, want)
	}
	line = `msg="tool call timing" tool=sandbox_exec server_us=900 sandbox_us=800 interpreter_us=0 command_us=650`
	if tool, got, ok := parseTiming(line); !ok || tool != "sandbox_exec" || got.Command != 650*time.Microsecond {
		t.Errorf("parseTiming(%q) = %q, %+v, %v; want sandbox_exec with command 650µs", line, tool, got, ok)
	}
	for _, bad := range []string{`msg="tool call timing" tool=run_code server_us=1`, `msg="tool call timing" tool=x server_us=a sandbox_us=1 interpreter_us=1`, `msg="tool call timing" tool=x server_us=1 sandbox_us=1 command_us=1`} {
		if _, _, ok := parseTiming(bad); ok {
			t.Errorf("parseTiming(%q) ok", bad)
		}
	}
}

// TestBreakdownOf: each part is the median of that part over the calls,
// transport being what the server did not time.
func TestBreakdownOf(t *testing.T) {
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	b := breakdownOf("interpreter", []warmSample{
		{us(1000), callTiming{Server: us(600), Sandbox: us(450), Interpreter: us(150)}},
		{us(3000), callTiming{Server: us(2000), Sandbox: us(1800), Interpreter: us(200)}},
		{us(1200), callTiming{Server: us(700), Sandbox: us(500), Interpreter: us(100)}},
	})
	want := Breakdown{Inside: "interpreter", N: 3, Total: us(1200), Transport: us(500), Engine: us(200), Agent: us(400), Interpreter: us(150)}
	if b != want {
		t.Errorf("breakdownOf = %+v, want %+v", b, want)
	}
}
