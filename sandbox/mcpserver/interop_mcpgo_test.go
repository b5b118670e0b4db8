package mcpserver_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// mcpgoClient connects mcp-go's client to a real server process.
func mcpgoClient(t *testing.T, p *proc) *client.Client {
	t.Helper()
	c := client.NewClient(transport.NewIO(p.stdout, p.stdin, nil))
	ctx := testContext(t, 30*time.Second)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "mcp-go-test", Version: "1.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v\nstderr: %s", err, p.stderr.String())
	}
	return c
}

// TestProgressBeforeResultMcpGo is the ordering test with mcp-go's client.
func TestProgressBeforeResultMcpGo(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	c := mcpgoClient(t, p)
	var mu sync.Mutex
	got := map[string]int{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			got[fmt.Sprint(n.Params.AdditionalFields["progressToken"])]++
			mu.Unlock()
		}
	})
	ctx := testContext(t, 5*time.Minute)
	create := mcp.CallToolRequest{}
	create.Params.Name = "sandbox_create"
	res, err := c.CallTool(ctx, create)
	if err != nil || res.IsError {
		t.Fatalf("create: %v %+v", err, res)
	}
	id := res.StructuredContent.(map[string]any)["sandbox_id"].(string)

	const calls = 100
	callConcurrently(calls, 8, func(i int) {
		req := mcp.CallToolRequest{}
		req.Params.Name = "sandbox_exec"
		req.Params.Arguments = map[string]any{"sandbox_id": id, "command": progressCommand(i)}
		req.Params.Meta = &mcp.Meta{ProgressToken: fmt.Sprintf("tok-%d", i)}
		r, err := c.CallTool(ctx, req)
		if err != nil || r.IsError {
			t.Errorf("call %d: %v %+v", i, err, r)
		}
	})
	checkProgressOrder(t, p.wire, calls)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != calls {
		t.Errorf("client saw progress for %d calls, want %d", len(got), calls)
	}
}
