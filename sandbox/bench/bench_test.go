package bench_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/bench"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// serverBin is the mcp-sandbox binary under measurement, built by TestMain
// when benchmarks run (or $MCP_SANDBOX_BENCH_SERVER, to measure another
// build with the same harness).
var serverBin string

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run()) // no benchmark asked for: nothing to build
	}
	if serverBin = os.Getenv("MCP_SANDBOX_BENCH_SERVER"); serverBin != "" {
		// A given binary, to compare builds with the same harness.
		code := m.Run()
		if harness != nil {
			if err := harness.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "close benchmark:", err)
			}
		}
		os.Exit(code)
	}
	dir, err := os.MkdirTemp("", "mcp-sandbox-bench-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if serverBin, err = testenv.Build(dir, "mcp-sandbox"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if harness != nil {
		if err := harness.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close benchmark:", err)
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// harness is shared by the benchmark's runs (the testing package runs it
// once with b.N = 1, then with the count asked for).
var harness *bench.Harness

// BenchmarkServer runs b.N interleaved rounds of our calls and their docker
// baselines, prints the table and writes it to $MCP_SANDBOX_BENCH_OUT (and
// JSON beside it) when set. Run it with
//
//	go test ./sandbox/bench -run '^$' -bench . -benchtime 20x
func BenchmarkServer(b *testing.B) {
	testenv.Docker(b, testenv.PythonImage)
	ctx := context.Background()
	if harness == nil {
		h, err := bench.Start(ctx, bench.Options{Server: serverBin, Image: testenv.PythonImage, Pull: "never", Log: os.Stderr, Floods: benchFloods()})
		if err != nil {
			b.Fatal(err)
		}
		harness = h
	}
	harness.Reset()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := harness.Round(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if bt := flag.Lookup("test.benchtime").Value.String(); b.N == 1 && bt != "1x" {
		return // the probe run; the real one follows
	}
	rep, err := harness.Finish(ctx)
	if err != nil {
		b.Error(err) // reported, not fatal: the figures are still worth showing
	}
	for _, c := range rep.Comparisons {
		b.ReportMetric(c.Ratio, fmt.Sprintf("ratio-%d", comparisonIndex(c.Name)))
	}
	b.ReportMetric(float64(rep.IdleRSSKB)/1024, "idle-MB")
	_ = rep.WriteText(os.Stdout)
	if out := os.Getenv("MCP_SANDBOX_BENCH_OUT"); out != "" {
		writeReport(b, rep, out)
	}
}

// benchFloods are the floods' sizes: the issue's, or with
// $MCP_SANDBOX_BENCH_FLOOD_MIB another file size (0: no floods).
func benchFloods() bench.Floods {
	f := bench.DefaultFloods
	if v := os.Getenv("MCP_SANDBOX_BENCH_FLOOD_MIB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "MCP_SANDBOX_BENCH_FLOOD_MIB=%q is not a number of MiB; using %d\n", v, f.ReadMiB)
			return f
		}
		f.ReadMiB = n
	}
	return f
}

func comparisonIndex(name string) int {
	for i, n := range []string{bench.Warm, bench.Create, bench.OneShot, bench.ExecTrue, bench.List, bench.ExecIdle} {
		if n == name {
			return i + 1
		}
	}
	return 0
}

func writeReport(b *testing.B, rep bench.Report, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	if err := rep.WriteText(f); err != nil {
		b.Error(err)
	}
	j, err := os.Create(path + ".json")
	if err != nil {
		b.Error(err)
		return
	}
	defer j.Close()
	if err := rep.WriteJSON(j); err != nil {
		b.Error(err)
	}
}
