package kubernetes_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

// listedExec is how sandbox id runs commands, as sandbox_list says.
func listedExec(ctx context.Context, t *testing.T, eng *sandbox.Engine, id string) (string, string) {
	t.Helper()
	list, err := eng.List(ctx, sandbox.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range list.Sandboxes {
		if in.ID == id {
			return in.Exec, in.ExecNote
		}
	}
	t.Fatalf("sandbox %s not listed", id)
	return "", ""
}

// A sandbox is ready when created: when Create returns, its command agent
// runs (sandbox_list says "agent"), whether the sandbox was claimed from
// the warm pool (python) or made directly (javascript). Rounds of the two
// interleave; the p50 of create, the first exec and the second is printed
// (none is asserted: the machine is shared).
func TestReadyWhenCreatedOnCluster(t *testing.T) {
	be := kubernetes.NewTestBackend(t, kubernetes.Config{UseAgentSandbox: "auto", RuntimeClass: "gvisor", WarmPool: map[string]int{"python": 1}})
	eng, _ := clusterEngineOn(t, be, func(c *config.Config) { c.Images.JavaScript = "mcp-sandbox-test/node:18" })
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const rounds = 5
	times := map[string][3][]time.Duration{}
	for i := range 2 * rounds {
		lang := []string{"python", "javascript"}[i%2]
		d := times[lang]
		start := time.Now()
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: lang})
		if err != nil {
			t.Fatalf("Create %s: %v", lang, err)
		}
		d[0] = append(d[0], time.Since(start))
		if p, why := listedExec(ctx, t, eng, sb.ID); p != sandbox.ExecAgent {
			t.Errorf("%s sandbox %s: when Create returned its exec path is %q (%s), want the agent running", lang, sb.ID, p, why)
		}
		for j := 1; j <= 2; j++ {
			start = time.Now()
			res, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "true"})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("exec %d in %s sandbox: %+v, %v", j, lang, res, err)
			}
			d[j] = append(d[j], time.Since(start))
		}
		times[lang] = d
		if _, err := eng.Stop(ctx, sb.ID, sandbox.StopRequest{}); err != nil {
			t.Fatalf("Stop: %v", err)
		}
	}
	for lang, d := range times {
		t.Logf("%s (%d rounds, p50): create %v, first exec %v, second exec %v", lang, rounds, p50(d[0]), p50(d[1]), p50(d[2]))
	}
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}
