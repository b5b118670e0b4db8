package mcpserver_test

import (
	"context"
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
	if err := mcpgoStart(testContext(t, 30*time.Second), c, "mcp-go-test"); err != nil {
		t.Fatalf("%v\nstderr: %s", err, p.stderr.String())
	}
	return c
}

// mcpgoStart starts an mcp-go client and initializes the session.
func mcpgoStart(ctx context.Context, c *client.Client, name string) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return nil
}

// mcpgoProgressCalls creates a sandbox through c and makes that many
// concurrent sandbox_exec calls, each with a progress token of its own. It
// returns for how many tokens the client saw progress.
func mcpgoProgressCalls(t *testing.T, c *client.Client, calls int) int {
	t.Helper()
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
	mu.Lock()
	defer mu.Unlock()
	return len(got)
}

// TestProgressBeforeResultMcpGo is the ordering test with mcp-go's client.
func TestProgressBeforeResultMcpGo(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	c := mcpgoClient(t, p)
	const calls = 100
	seen := mcpgoProgressCalls(t, c, calls)
	checkProgressOrder(t, p.wire, calls)
	if seen != calls {
		t.Errorf("client saw progress for %d calls, want %d", seen, calls)
	}
}
