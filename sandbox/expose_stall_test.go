package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

// Many host readers that asked a preview for a large file and never read
// hold up no one: a fresh reader gets a small page at once (issue 31: with
// 50 such readers, a 51st waited over 60 s).
func TestExposeStalledReaders(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	if _, err := eng.WriteFile(context.Background(), sb.ID, sandbox.WriteFileRequest{Path: "www/small.txt", Content: []byte("small page\n")}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, eng, sb.ID, "head -c 8388608 /dev/zero >/workspace/www/big.bin")
	startInSandbox(t, eng, sb.ID, "cd /workspace/www && exec python3 -m http.server 8000 --bind 127.0.0.1", 8000)
	x := mustExpose(t, eng, sb.ID, 8000)
	for _, n := range []int{20, 50} {
		t.Run(strconv.Itoa(n), func(t *testing.T) { testStalledReaders(t, x, n) })
	}
}

// testStalledReaders connects n clients that ask for big.bin and never
// read, then GETs small.txt with a fresh client, within 5 s.
func testStalledReaders(t *testing.T, x sandbox.Exposure, n int) {
	for i := range n {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(x.HostPort))
		if err != nil {
			t.Fatalf("stalled reader %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		// A small receive buffer, so the preview's own writes block soon.
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		fmt.Fprintf(c, "GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", x.HostPort)
	}
	time.Sleep(2 * time.Second) // the stalled streams' windows fill
	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := cl.Get(x.URL + "small.txt")
	if err != nil {
		t.Fatalf("a fresh reader beside %d stalled ones got nothing: %v", n, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || string(b) != "small page\n" {
		t.Fatalf("a fresh reader beside %d stalled ones: %d %q %v", n, resp.StatusCode, b, err)
	}
	t.Logf("a fresh reader beside %d stalled ones took %s", n, time.Since(start).Round(time.Millisecond))
}
