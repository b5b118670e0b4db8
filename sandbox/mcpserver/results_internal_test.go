package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestErrorResultCancelled: a call the client cancelled reads as a
// cancellation, not as an engine failure.
func TestErrorResultCancelled(t *testing.T) {
	res := errorResult(fmt.Errorf("run: %w", fmt.Errorf("cancelled: %w", context.Canceled)))
	got := res.Content[0].(mcp.TextContent).Text
	if !res.IsError || !strings.Contains(got, "cancelled by the client") || strings.Contains(got, "engine failed") {
		t.Errorf("cancelled call: %q (isError %v)", got, res.IsError)
	}
}
