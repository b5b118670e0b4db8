package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what a benchmark run found.
type Report struct {
	Rounds      int          `json:"rounds"`
	Image       string       `json:"image"`
	Docker      string       `json:"docker_version"`
	Runtime     string       `json:"runtime,omitempty"` // Options.Runtime
	CPUs        int          `json:"cpus"`
	When        time.Time    `json:"when"`
	Comparisons []Comparison `json:"comparisons"`
	// PoolClaims counts measured creates and one-shot runs served by the
	// warm pool (each round has one of each).
	PoolClaims int `json:"pool_claims"`
	// WarmBreakdown splits the warm run_code row's time.
	WarmBreakdown Breakdown `json:"warm_breakdown"`
	// ExecTrueBreakdown splits the sandbox_exec true row's time.
	ExecTrueBreakdown Breakdown `json:"exec_true_breakdown"`
	// ExecTrueFloor is what sandbox_exec true costs this machine with
	// nothing of MCP Sandbox's in the engine's stream (floor.go).
	ExecTrueFloor Floor      `json:"exec_true_floor"`
	IdleRSSKB     int64      `json:"idle_rss_kb"`
	Idle          Memory     `json:"idle_memory"`
	RSS10KB       int64      `json:"rss_10_sandboxes_kb"`
	Concurrent    Concurrent `json:"concurrent_one_shot"`
	Surface       Surface    `json:"surface"`
	// Floods are the red team's floods with the server's peak memory.
	Floods []Flood `json:"floods,omitempty"`
}

// Comparison is one of our calls against its docker baseline.
type Comparison struct {
	Name     string  `json:"name"`
	Ours     Stats   `json:"ours"`
	Baseline Stats   `json:"baseline"`
	Ratio    float64 `json:"ratio"`     // median ours / median baseline
	P95Ratio float64 `json:"p95_ratio"` // p95 ours / p95 baseline
	Target   float64 `json:"target"`    // the goal for Ratio
	// TargetMedian is the goal for Ours.Median, for calls whose
	// goal is a time rather than a ratio.
	TargetMedian time.Duration `json:"target_median_ns,omitempty"`
}

// Memory is the server's resident set in kB, from /proc.
type Memory struct {
	RSSKB  int64 `json:"rss_kb"`
	AnonKB int64 `json:"anon_kb"` // its own data: heap, stacks, runtime
	FileKB int64 `json:"file_kb"` // mapped file pages: its code and read-only data
	// Released says the server had returned its free heap to the system
	// after going quiet when it was measured.
	Released bool `json:"released"`
}

// Concurrent is the result of concurrent one-shot run_code calls.
type Concurrent struct {
	N    int           `json:"n"`
	OK   int           `json:"ok"`
	Wall time.Duration `json:"wall_ns"`
}

// idleRSSTarget is the goal for the idle server (issue 34).
const idleRSSTarget = 18 << 10 // kB

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// WriteText writes the report as a table for people.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	runtime := ""
	if r.Runtime != "" {
		runtime = " (runtime " + r.Runtime + ")"
	}
	fmt.Fprintf(&b, "MCP Sandbox benchmark: %d interleaved rounds, image %s, Docker %s%s, %d CPUs, %s\n\n",
		r.Rounds, r.Image, r.Docker, runtime, r.CPUs, r.When.Format(time.RFC3339))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "comparison\tours median / p95 (ms)\tbaseline median / p95 (ms)\tratio (p95)\ttarget")
	for _, c := range r.Comparisons {
		var goals []string
		if c.Target > 0 {
			goals = append(goals, fmt.Sprintf("≤ %.2f %s", c.Target, mark(c.Ratio > 0 && c.Ratio <= c.Target)))
		}
		if c.TargetMedian > 0 {
			goals = append(goals, fmt.Sprintf("median ≤ %s ms %s", ms(c.TargetMedian), mark(c.Ours.Median > 0 && c.Ours.Median <= c.TargetMedian)))
		}
		target := "-"
		if len(goals) > 0 {
			target = strings.Join(goals, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s / %s\t%s / %s\t%.3f (%.3f)\t%s\n", c.Name, ms(c.Ours.Median), ms(c.Ours.P95),
			ms(c.Baseline.Median), ms(c.Baseline.P95), c.Ratio, c.P95Ratio, target)
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nwarm run_code: %s\n", r.WarmBreakdown)
	fmt.Fprintf(&b, "sandbox_exec true: %s\n", r.ExecTrueBreakdown)
	fmt.Fprintf(&b, "sandbox_exec true's floor here: %s\n", r.ExecTrueFloor.line(r.baselineMedian(ExecTrue)))
	fmt.Fprintf(&b, "warm pool served %d of the %d measured creates, one-shot runs (burst ones included) and stopped sandboxes\n", r.PoolClaims, (3+burstN)*r.Rounds)
	released := fmt.Sprintf("the most over the %.0f s after it returned its free heap", idleSettle.Seconds())
	if !r.Idle.Released {
		released = "it had NOT returned its free heap"
	}
	fmt.Fprintf(&b, "server RSS idle: %.1f MB (target ≤ %d MB, %s): %.1f MB its own data, %.1f MB mapped code and read-only data (%s); with 10 sandboxes open: %.1f MB\n",
		float64(r.IdleRSSKB)/1024, idleRSSTarget>>10, mark(r.IdleRSSKB > 0 && r.IdleRSSKB <= idleRSSTarget),
		float64(r.Idle.AnonKB)/1024, float64(r.Idle.FileKB)/1024, released, float64(r.RSS10KB)/1024)
	fmt.Fprintf(&b, "tools/list %d bytes (target ≤ %d %s), names+descriptions+input schemas %d bytes (target ≤ %d %s), instructions %d bytes (target ≤ %d %s)\n",
		r.Surface.ToolsListBytes, toolsListTarget, mark(r.Surface.ToolsListBytes > 0 && r.Surface.ToolsListBytes <= toolsListTarget),
		r.Surface.ToolsCoreBytes, toolsCoreTarget, mark(r.Surface.ToolsCoreBytes > 0 && r.Surface.ToolsCoreBytes <= toolsCoreTarget),
		r.Surface.InstructionsBytes, instructionsTarget, mark(r.Surface.InstructionsBytes > 0 && r.Surface.InstructionsBytes <= instructionsTarget))
	fmt.Fprintf(&b, "%d concurrent one-shot run_code calls: %d succeeded in %.1f s (%s)\n",
		r.Concurrent.N, r.Concurrent.OK, r.Concurrent.Wall.Seconds(), mark(r.Concurrent.N > 0 && r.Concurrent.OK == r.Concurrent.N))
	writeFloods(&b, r.Floods)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeFloods writes the flood rows: the server's peak memory under each,
// beside its bound, and a real client's time meanwhile.
func writeFloods(b *strings.Builder, floods []Flood) {
	if len(floods) == 0 {
		return
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "flood\tsize\tserver peak RSS (MB)\tbound\treal client meanwhile\ttook (s)")
	for _, f := range floods {
		bound := fmt.Sprintf("≤ %d MB %s", f.BoundKB>>10, mark(f.Err == "" && f.PeakKB > 0 && f.PeakKB <= f.BoundKB))
		client := "-"
		if f.LatencyBound > 0 {
			client = fmt.Sprintf("%s ms (≤ %s ms %s)", ms(f.Latency), ms(f.LatencyBound), mark(f.Err == "" && f.Latency > 0 && f.Latency <= f.LatencyBound))
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t%s\t%.1f\n", f.Name, f.What, float64(f.PeakKB)/1024, bound, client, f.Took.Seconds())
	}
	tw.Flush()
	for _, f := range floods {
		if f.Note != "" {
			fmt.Fprintf(b, "%s: %s\n", f.Name, f.Note)
		}
		if f.Err != "" {
			fmt.Fprintf(b, "%s FAILED: %s\n", f.Name, f.Err)
		}
	}
}

// baselineMedian is the baseline's median of the comparison named name.
func (r Report) baselineMedian(name string) time.Duration {
	for _, c := range r.Comparisons {
		if c.Name == name {
			return c.Baseline.Median
		}
	}
	return 0
}
