package sandbox_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
)

// previewServer is a small web server for the sandbox, Python stdlib
// only: GET /big streams 50 MB of a known pattern; /ws is a WebSocket
// echo of text frames; /slow-head answers after the client reads.
const previewServer = `
import base64, hashlib, http.server, socketserver, struct, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_GET(self):
        if self.path == "/big":
            block = bytes(range(256)) * 256
            n = 50 * (1 << 20)
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            for _ in range(n // len(block)):
                self.wfile.write(block)
            return
        if self.path == "/ws":
            key = self.headers["Sec-WebSocket-Key"].encode()
            acc = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest()).decode()
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", acc)
            self.end_headers()
            self.wfile.flush()
            while True:
                h = self.rfile.read(2)
                if len(h) < 2 or h[0] & 0x0f == 8:
                    return
                n = h[1] & 0x7f
                if n == 126:
                    n = struct.unpack(">H", self.rfile.read(2))[0]
                mask = self.rfile.read(4)
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
                out = b"echo:" + data
                self.wfile.write(bytes([0x81, len(out)]) + out)
                self.wfile.flush()
        body = ("host=" + self.headers.get("Host", "")).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        # /sink never reads what it is sent.
        import time
        time.sleep(3600)
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

// startInSandbox starts cmd in the background in sb and waits (polling,
// with a deadline) until port answers inside.
func startInSandbox(t *testing.T, eng *sandbox.Engine, id, cmd string, port int) {
	t.Helper()
	mustExec(t, eng, id, "setsid sh -c '"+cmd+"' >/tmp/server.log 2>&1 </dev/null &")
	probe := fmt.Sprintf(`python3 -c "import socket; socket.create_connection(('127.0.0.1', %d), 1)"`, port)
	deadline := time.Now().Add(20 * time.Second)
	for mustExec(t, eng, id, probe).ExitCode != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %d in the sandbox: %s", port, mustExec(t, eng, id, "cat /tmp/server.log").Stdout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mustExpose(t *testing.T, eng *sandbox.Engine, id string, port int) preview.Exposure {
	t.Helper()
	x, err := eng.Expose(context.Background(), id, preview.ExposeRequest{Port: port})
	if err != nil {
		t.Fatalf("expose %d: %v", port, err)
	}
	if want := "http://127.0.0.1:" + strconv.Itoa(x.HostPort) + "/"; x.URL != want || x.Port != port {
		t.Fatalf("exposure %+v, want url %s", x, want)
	}
	return x
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A sandbox with no network serves a web app to the host through
// sandbox_expose: python3 -m http.server, a WebSocket echo, a 50 MB
// response with the server's memory bounded, a foreign Host refused
// without reaching the sandbox, and the listener gone after close and
// after sandbox_stop.
func TestExposePreview(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	if _, err := eng.WriteFile(context.Background(), sb.ID, sandbox.WriteFileRequest{Path: "www/hello.txt", Content: []byte("hello from the sandbox\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.WriteFile(context.Background(), sb.ID, sandbox.WriteFileRequest{Path: "srv.py", Content: []byte(previewServer)}); err != nil {
		t.Fatal(err)
	}
	startInSandbox(t, eng, sb.ID, "cd /workspace/www && exec python3 -m http.server 8000 --bind 127.0.0.1", 8000)
	startInSandbox(t, eng, sb.ID, "exec python3 /workspace/srv.py 8001", 8001)
	if res := mustExec(t, eng, sb.ID, "cat /proc/net/dev"); strings.Contains(res.Stdout, "eth0") {
		t.Fatalf("the sandbox has a network:\n%s", res.Stdout)
	}

	web := mustExpose(t, eng, sb.ID, 8000)
	if again := mustExpose(t, eng, sb.ID, 8000); again != web {
		t.Errorf("exposing again gave %+v, want the same %+v", again, web)
	}
	if code, body := get(t, web.URL+"hello.txt"); code != 200 || body != "hello from the sandbox\n" {
		t.Errorf("http.server through the preview: %d %q", code, body)
	}
	t.Run("foreign host refused", func(t *testing.T) { testForeignHost(t, eng, sb.ID, web) })

	app := mustExpose(t, eng, sb.ID, 8001)
	if code, body := get(t, strings.Replace(app.URL, "127.0.0.1", "localhost", 1)); code != 200 || body != "host=localhost:"+strconv.Itoa(app.HostPort) {
		t.Errorf("the program must see the Host the browser used: %d %q", code, body)
	}
	t.Run("websocket", func(t *testing.T) { testWebSocket(t, app) })
	t.Run("a stream nobody reads holds up nothing", func(t *testing.T) { testStuckStream(t, eng, sb.ID, app) })
	t.Run("50 MB bounded", func(t *testing.T) { testBigResponse(t, app) })

	if x := eng.Exposed(sb.ID); len(x) != 2 || x[0] != web || x[1] != app {
		t.Errorf("exposed: %+v", x)
	}
	if res, err := eng.Unexpose(context.Background(), sb.ID, preview.ExposeRequest{Port: 8000}); !res.Closed || err != nil {
		t.Errorf("close: %v %v", res.Closed, err)
	}
	waitRefused(t, web.HostPort)
	if _, err := eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	waitRefused(t, app.HostPort)
}

// waitRefused polls until nothing listens on the host's port.
func waitRefused(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("port %d still listens", port)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A request for another name (DNS rebinding) gets 403 and never reaches
// the sandbox: http.server logs every request it gets.
func testForeignHost(t *testing.T, eng *sandbox.Engine, id string, x preview.Exposure) {
	for _, host := range []string{"evil.example:" + strconv.Itoa(x.HostPort), "evil.example", "127.0.0.1", "127.0.0.1:1", "localhost.evil.example:" + strconv.Itoa(x.HostPort), ""} {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(x.HostPort))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /hello.txt?probe=rebind HTTP/1.1\r\nHost: %s\r\n\r\n", host)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil {
			t.Fatalf("Host %q: %v", host, err)
		}
		if host == "" && resp.StatusCode == 400 {
			continue // Go's server refuses a missing Host itself
		}
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host %q: status %d, want 403", host, resp.StatusCode)
		}
	}
	// An absolute URI names the host too.
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(x.HostPort))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET http://evil.example/hello.txt?probe=rebind HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", x.HostPort)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	c.Close()
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("absolute URI of another host: %v %v", resp, err)
	}
	// On a kept-alive connection, every request is checked, not only the
	// first.
	c, err = net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(x.HostPort))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /hello.txt HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\nGET /hello.txt?probe=rebind HTTP/1.1\r\nHost: evil.example:%d\r\n\r\n", x.HostPort, x.HostPort)
	br := bufio.NewReader(c)
	for i, want := range []int{http.StatusOK, http.StatusForbidden} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("kept-alive request %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != want {
			t.Errorf("kept-alive request %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	if log := mustExec(t, eng, id, "cat /tmp/server.log").Stdout; strings.Contains(log, "probe=rebind") {
		t.Errorf("a refused request reached the sandbox:\n%s", log)
	}
}

// testWebSocket upgrades a connection through the preview and echoes.
func testWebSocket(t *testing.T, x preview.Exposure) {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(x.HostPort))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", x.HostPort)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("upgrade: %+v %v", resp, err)
	}
	for i, msg := range []string{"hello", "second message", strings.Repeat("x", 100)} {
		mask := []byte{1, 2, 3, byte(i)}
		frame := []byte{0x81}
		frame = append(frame, 0x80|byte(len(msg)))
		frame = append(frame, mask...)
		for j := range len(msg) {
			frame = append(frame, msg[j]^mask[j%4])
		}
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		want := "echo:" + msg
		head := make([]byte, 2)
		if _, err := io.ReadFull(br, head); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, head[1])
		if _, err := io.ReadFull(br, got); err != nil || string(got) != want {
			t.Errorf("echo %d: %q %v, want %q", i, got, err, want)
		}
	}
}

// testBigResponse streams 50 MB; while the reader pauses, the sandbox is
// held back by the stream's credit, not buffered by the server.
func testBigResponse(t *testing.T, x preview.Exposure) {
	resp, err := http.Get(x.URL + "big")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	block := make([]byte, 256*256)
	for i := range block {
		block[i] = byte(i)
	}
	buf := make([]byte, len(block))
	read := func() bool {
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatalf("after reading: %v", err)
		}
		return string(buf) == string(block)
	}
	if !read() {
		t.Fatal("wrong bytes")
	}
	base := heapInUse()
	time.Sleep(1500 * time.Millisecond) // the sandbox writes as fast as it may
	grown := int64(heapInUse()) - int64(base)
	start := time.Now()
	n := len(block)
	for n < 50<<20 {
		if !read() {
			t.Fatalf("wrong bytes at %d", n)
		}
		n += len(block)
	}
	if extra, _ := io.Copy(io.Discard, resp.Body); extra != 0 {
		t.Errorf("%d bytes beyond 50 MB", extra)
	}
	t.Logf("50 MB through the preview: %.0f MB/s; heap grew by %d KiB while the reader paused", 50/time.Since(start).Seconds(), grown>>10)
	if grown > 8<<20 {
		t.Errorf("the server's heap grew by %d MiB while the reader paused: the sandbox's output is not bounded", grown>>20)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// The agent listens on a loopback port inside the sandbox and hands each
// connection a program there makes to the server, as a stream: bytes both
// ways, half-closes included.
func TestAgentListenHandsConnections(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	mustExec(t, eng, sb.ID, "true") // the agent runs
	port, err := sandbox.ListenForTest(context.Background(), eng, sb.ID, 0, func(c net.Conn) {
		defer c.Close()
		in, err := io.ReadAll(c) // until the program's half-close
		if err != nil {
			return
		}
		fmt.Fprintf(c, "server got %q", in)
	})
	if err != nil || port == 0 {
		t.Fatalf("listen: %d %v", port, err)
	}
	script := fmt.Sprintf(`python3 -c "
import socket
for i in range(3):
    s = socket.create_connection(('127.0.0.1', %d), 5)
    s.sendall(b'ping %%d' %% i)
    s.shutdown(socket.SHUT_WR)
    out = b''
    while True:
        b = s.recv(4096)
        if not b:
            break
        out += b
    print(out.decode())
"`, port)
	res := mustExec(t, eng, sb.ID, script)
	if want := "server got \"ping 0\"\nserver got \"ping 1\"\nserver got \"ping 2\"\n"; res.ExitCode != 0 || res.Stdout != want {
		t.Errorf("through the agent's listener: %+v, want %q", res, want)
	}
}

// testStuckStream sends 20 MB to a program that never reads them: that
// stream waits for credit, while other requests and tool calls go on.
func testStuckStream(t *testing.T, eng *sandbox.Engine, id string, x preview.Exposure) {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(x.HostPort))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := 20 << 20
	sent := make(chan int64, 1)
	go func() {
		fmt.Fprintf(c, "POST /sink HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: %d\r\n\r\n", x.HostPort, body)
		n, _ := io.Copy(c, io.LimitReader(zeros{}, int64(body)))
		sent <- n
	}()
	time.Sleep(time.Second) // the sink's buffers fill
	start := time.Now()
	if code, _ := get(t, x.URL+"other"); code != 200 {
		t.Errorf("another request while a stream is stuck: %d", code)
	}
	if res := mustExec(t, eng, id, "echo ok"); res.Stdout != "ok\n" {
		t.Errorf("a tool call while a stream is stuck: %+v", res)
	}
	t.Logf("a request and a tool call beside a stuck stream took %s", time.Since(start).Round(time.Millisecond))
	select {
	case n := <-sent:
		t.Errorf("all %d bytes were taken by a program that reads nothing", n)
	default:
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A preview whose program ended says so once (502), then is closed and
// leaves the sandbox's exposed list: the window offers no preview that
// cannot open.
func TestExposeDropsDeadPreview(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	// Exposed before its program listens: 502, and the preview stays
	// (the program may still be starting).
	early := mustExpose(t, eng, sb.ID, 8002)
	resp, err := http.Head(early.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(preview.ClosedHeader) != "" || len(eng.Exposed(sb.ID)) != 1 {
		t.Fatalf("a preview before its program listens: %d %v, exposed %+v; want a plain 502 and the preview kept", resp.StatusCode, resp.Header, eng.Exposed(sb.ID))
	}
	startInSandbox(t, eng, sb.ID, "exec python3 -m http.server 8002 --bind 127.0.0.1", 8002)
	x := mustExpose(t, eng, sb.ID, 8002)
	if code, _ := get(t, x.URL); code != 200 {
		t.Fatalf("the preview answered %d before its program ended", code)
	}
	mustExec(t, eng, sb.ID, `for p in /proc/[0-9]*; do grep -q http.server $p/cmdline 2>/dev/null && kill ${p#/proc/}; done; sleep 0.5`)
	resp, err = http.Head(x.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(preview.ClosedHeader) == "" {
		t.Errorf("a preview of a port nothing listens on: %d %v", resp.StatusCode, resp.Header)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(eng.Exposed(sb.ID)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still exposed: %+v", eng.Exposed(sb.ID))
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitRefused(t, x.HostPort)
}
