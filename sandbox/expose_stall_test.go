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
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
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
	mustExec(t, eng, sb.ID, "head -c 33554432 /dev/zero >/workspace/www/big.bin")
	startInSandbox(t, eng, sb.ID, "cd /workspace/www && exec python3 -m http.server 8000 --bind 127.0.0.1", 8000)
	x := mustExpose(t, eng, sb.ID, 8000)
	for _, n := range []int{20, 50} {
		t.Run(strconv.Itoa(n), func(t *testing.T) { testStalledReaders(t, x, n) })
	}
	t.Run("a reader that never reads is cut", func(t *testing.T) { testStalledCut(t, x) })
}

// testStalledCut leaves one reader stalled past the stall limit (3 s here):
// its response (32 MiB, more than the sockets' buffers hold) is cut
// short, so it holds no stream for ever.
func testStalledCut(t *testing.T, x preview.Exposure) {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(x.HostPort))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A limit of seconds, not the minute in production: the same code cuts.
	defer sandbox.SetStreamStallLimit(3 * time.Second)()
	fmt.Fprintf(c, "GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", x.HostPort)
	time.Sleep(6 * time.Second)
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := io.Copy(io.Discard, c)
	if n >= 32<<20 {
		t.Fatalf("a reader stalled past the limit still got all %d bytes (%v)", n, err)
	}
	t.Logf("the stalled reader got %d bytes, then %v", n, err)
}

// testStalledReaders connects n clients that ask for big.bin and never
// read, then GETs small.txt with a fresh client, within 5 s.
func testStalledReaders(t *testing.T, x preview.Exposure, n int) {
	for i := range n {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(x.HostPort))
		if err != nil {
			t.Fatalf("stalled reader %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
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
