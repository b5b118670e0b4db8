package bench

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpclient"
)

// The budgets of what every conversation reads before a single call
// (sandbox/README.md, Tools), in compact JSON bytes.
const (
	toolsListTarget    = 9 << 10
	toolsCoreTarget    = 6 << 10
	instructionsTarget = 1 << 10
)

// Surface is the size of what the server says of itself: the tools/list
// result, the part of it that is names, descriptions and input schemas,
// and the instructions.
type Surface struct {
	ToolsListBytes    int `json:"tools_list_bytes"`
	ToolsCoreBytes    int `json:"tools_core_bytes"`
	InstructionsBytes int `json:"instructions_bytes"`
}

// measureSurface lists the tools once and measures them as the client
// decoded them.
func measureSurface(ctx context.Context, sess *mcpclient.Session) (Surface, error) {
	var s Surface
	res, err := sess.Client().ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return s, fmt.Errorf("tools/list: %w", err)
	}
	if s.ToolsListBytes, err = compactLen(res); err != nil {
		return s, err
	}
	for _, t := range res.Tools {
		raw, err := json.Marshal(t)
		if err != nil {
			return s, err
		}
		var parts struct {
			Name, Description, InputSchema json.RawMessage
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return s, err
		}
		s.ToolsCoreBytes += len(parts.Name) + len(parts.Description) + len(parts.InputSchema)
	}
	if ir := sess.InitializeResult(); ir != nil {
		s.InstructionsBytes = len(ir.Instructions)
	}
	return s, nil
}

func compactLen(v any) (int, error) {
	raw, err := json.Marshal(v)
	return len(raw), err
}
