package mcpserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
)

const probeToken = "probe-token-0123456789abcdef0123456789abcdef"

// TestHTTPProgressAtEndOfCall shows the race in mcp-go's streamable HTTP
// transport that loses a call's last progress notification, and that the
// delivery wait closes it. It needs no Docker: the probe tool reports its
// output through the same progress reporter as sandbox_exec, behind the
// real HTTP handler chain, and the official SDK client reads the stream.
//
// Without the wait nearly every call loses its last line: when flush
// queues it, mcp-go's forwarder goroutine is parked receiving on the
// session's queue, so the channel hands the notification straight to it;
// the call's own goroutine, still running, takes the response lock first,
// finds the queue empty, marks the request done and writes the result, and
// the forwarder then drops the notification.
func TestHTTPProgressAtEndOfCall(t *testing.T) {
	const calls, parallel = 200, 8
	for _, tc := range []struct {
		name       string
		wait       time.Duration
		wantFaults bool
	}{
		{"with the delivery wait", 2 * time.Second, false},
		{"without it the last line is lost", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore := mcpserver.SetDeliveryTimeout(tc.wait)
			defer restore()
			srv := httptest.NewServer(mcpserver.ProbeHandler(probeToken, 5*time.Millisecond))
			defer srv.Close()
			faults := probeCalls(t, srv.URL+mcpserver.HTTPPath, calls, parallel)
			switch {
			case tc.wantFaults && len(faults) == 0:
				t.Errorf("no call lost progress in %d calls without the delivery wait: the test no longer shows the race", calls)
			case tc.wantFaults:
				t.Logf("%d faults in %d calls, e.g. %s", len(faults), calls, faults[0])
			case len(faults) > 0:
				t.Errorf("%d faults in %d calls:\n%s", len(faults), calls, strings.Join(faults, "\n"))
			}
		})
	}
}

// probeCalls makes calls calls of the probe tool, parallel at a time, with
// the official SDK client, and returns the faults progressFaults finds on
// the wire.
func probeCalls(t *testing.T, url string, calls, parallel int) []string {
	t.Helper()
	rec := &wireRecorder{token: probeToken}
	c := mcp.NewClient(&mcp.Implementation{Name: "probe-test", Version: "1.0"}, nil)
	ctx := testContext(t, 2*time.Minute)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rec}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer sess.Close()
	callConcurrently(calls, parallel, func(i int) {
		params := &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{"n": i}}
		params.SetProgressToken(fmt.Sprintf("tok-%d", i))
		if r, err := sess.CallTool(ctx, params); err != nil || r.IsError {
			t.Errorf("call %d: %v %+v", i, err, r)
		}
	})
	return progressFaults(rec.messages(), calls)
}
