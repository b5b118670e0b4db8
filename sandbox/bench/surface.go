package bench

import (
	"bytes"
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

// measureSurface lists the tools once and measures the answer as the
// server sent it (w taps the wire): the library's decoded types would
// add fields of their own when encoded again.
func measureSurface(ctx context.Context, sess *mcpclient.Session, w *logWatch) (Surface, error) {
	var s Surface
	if _, err := sess.Client().ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		return s, fmt.Errorf("tools/list: %w", err)
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(w.toolsListLine(), &msg); err != nil || msg.Result == nil {
		return s, fmt.Errorf("tools/list: no answer seen on the wire (%v)", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, msg.Result); err != nil {
		return s, err
	}
	s.ToolsListBytes = compact.Len()
	var res struct {
		Tools []struct {
			Name, Description, InputSchema json.RawMessage
		} `json:"tools"`
	}
	if err := json.Unmarshal(compact.Bytes(), &res); err != nil {
		return s, err
	}
	for _, t := range res.Tools {
		s.ToolsCoreBytes += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	if ir := sess.InitializeResult(); ir != nil {
		s.InstructionsBytes = len(ir.Instructions)
	}
	return s, nil
}
