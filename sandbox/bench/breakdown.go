package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// callTiming is where one tool call's time went in the server, from its
// debug log line "tool call timing" (sandbox/mcpserver logTiming).
type callTiming struct {
	Server      time.Duration // the server's whole handling of the call
	Sandbox     time.Duration // of which the round trip to the sandbox's agent
	Interpreter time.Duration // of which the interpreter's own part
}

// parseTiming reads a "tool call timing" line: tool=… server_us=…
// sandbox_us=… interpreter_us=….
func parseTiming(line string) (tool string, t callTiming, ok bool) {
	us := map[string]*time.Duration{"server_us": &t.Server, "sandbox_us": &t.Sandbox, "interpreter_us": &t.Interpreter}
	found := 0
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		if k == "tool" {
			tool = v
			continue
		}
		if dst := us[k]; dst != nil {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return "", callTiming{}, false
			}
			*dst = time.Duration(n) * time.Microsecond
			found++
		}
	}
	return tool, t, tool != "" && found == len(us)
}

// timingAfter waits (briefly: the line is written before the answer) for
// the timing of tool's call number n+1 and returns it.
func (w *logWatch) timingAfter(ctx context.Context, tool string, n int) (callTiming, bool) {
	if w.waitFor(ctx, 2*time.Second, func() bool { return len(w.timings[tool]) > n }) != nil {
		return callTiming{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.timings[tool][n], true
}

// timingCount is how many timings of tool the log has given so far.
func (w *logWatch) timingCount(tool string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.timings[tool])
}

// Breakdown splits the warm run_code row's time, each part the median
// over the measured calls: transport (the client library, stdio and the
// server's MCP framing: what the server did not time), engine (the
// server's handling outside the round trip to the sandbox), agent (the
// round trip to the sandbox's agent outside the interpreter) and
// interpreter (what the resident interpreter says it spent).
type Breakdown struct {
	N           int           `json:"n"`
	Total       time.Duration `json:"total_ns"`
	Transport   time.Duration `json:"transport_ns"`
	Engine      time.Duration `json:"engine_ns"`
	Agent       time.Duration `json:"agent_ns"`
	Interpreter time.Duration `json:"interpreter_ns"`
}

// warmSample is one warm run_code call: its time at the client and the
// server's account of it.
type warmSample struct {
	total  time.Duration
	server callTiming
}

// breakdownOf summarises the warm calls.
func breakdownOf(samples []warmSample) Breakdown {
	var to, tr, en, ag, in []time.Duration
	for _, s := range samples {
		t := s.server
		to = append(to, s.total)
		tr = append(tr, s.total-t.Server)
		en = append(en, t.Server-t.Sandbox)
		ag = append(ag, t.Sandbox-t.Interpreter)
		in = append(in, t.Interpreter)
	}
	return Breakdown{
		N: len(samples), Total: summarize(to).Median, Transport: summarize(tr).Median,
		Engine: summarize(en).Median, Agent: summarize(ag).Median, Interpreter: summarize(in).Median,
	}
}

// noteWarm adds the server's timing of the warm call that followed the
// n-th run_code timing, taking total at the client, to the breakdown.
func (h *Harness) noteWarm(ctx context.Context, n int, total time.Duration) {
	t, ok := h.srv.watch.timingAfter(ctx, "run_code", n)
	if !ok {
		return
	}
	h.mu.Lock()
	h.warm = append(h.warm, warmSample{total, t})
	h.mu.Unlock()
}

func (b Breakdown) String() string {
	if b.N == 0 {
		return "no breakdown (the server logged no timing: an older build?)"
	}
	return fmt.Sprintf("transport %s + engine %s + agent %s + interpreter %s ms (medians of %d calls; total median %s ms)",
		ms3(b.Transport), ms3(b.Engine), ms3(b.Agent), ms3(b.Interpreter), b.N, ms3(b.Total))
}

func ms3(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
