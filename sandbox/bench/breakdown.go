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
	Command     time.Duration // of which a command's, as the agent measured it
}

// parseTiming reads a "tool call timing" line: tool=… server_us=…
// sandbox_us=… interpreter_us=… (and command_us=… from newer servers).
func parseTiming(line string) (tool string, t callTiming, ok bool) {
	us := map[string]*time.Duration{"server_us": &t.Server, "sandbox_us": &t.Sandbox, "interpreter_us": &t.Interpreter, "command_us": &t.Command}
	found := map[string]bool{}
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
			found[k] = true
		}
	}
	return tool, t, tool != "" && found["server_us"] && found["sandbox_us"] && found["interpreter_us"]
}

// timingAfter waits (briefly: the line is written as the answer goes out) for
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

// Breakdown splits a row's time, each part the median over the measured
// calls: transport (the client library, stdio and the server's MCP
// framing: what the server did not time), engine (the server's handling
// outside the round trip to the sandbox), agent (the round trip to the
// sandbox's agent outside what Inside names) and Interpreter: what the
// resident interpreter says it spent (warm run_code), or what the agent
// says the command took from its start frame to its exit, its shell's
// start included unless it was started ahead (sandbox_exec).
type Breakdown struct {
	Inside      string        `json:"inside"` // "interpreter" or "command"
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

// breakdownOf summarises the calls, inside naming their inner part.
func breakdownOf(inside string, samples []warmSample) Breakdown {
	var to, tr, en, ag, in []time.Duration
	for _, s := range samples {
		t := s.server
		inner := t.Interpreter + t.Command
		to = append(to, s.total)
		tr = append(tr, s.total-t.Server)
		en = append(en, t.Server-t.Sandbox)
		ag = append(ag, t.Sandbox-inner)
		in = append(in, inner)
	}
	return Breakdown{
		Inside: inside, N: len(samples), Total: summarize(to).Median, Transport: summarize(tr).Median,
		Engine: summarize(en).Median, Agent: summarize(ag).Median, Interpreter: summarize(in).Median,
	}
}

// noteTiming adds the server's timing of the tool call that followed its
// n-th timing, taking total at the client, to *to.
func (h *Harness) noteTiming(ctx context.Context, tool string, n int, total time.Duration, to *[]warmSample) {
	t, ok := h.srv.watch.timingAfter(ctx, tool, n)
	if !ok {
		return
	}
	h.mu.Lock()
	*to = append(*to, warmSample{total, t})
	h.mu.Unlock()
}

func (b Breakdown) String() string {
	if b.N == 0 {
		return "no breakdown (the server logged no timing: an older build?)"
	}
	return fmt.Sprintf("transport %s + engine %s + agent %s + %s %s ms (medians of %d calls; total median %s ms)",
		ms3(b.Transport), ms3(b.Engine), ms3(b.Agent), b.Inside, ms3(b.Interpreter), b.N, ms3(b.Total))
}

func ms3(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
