package preview

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
)

// fakeSet is a Set whose dials reach srv (the program inside) until gone
// is set, then fail as a dial into a sandbox where nothing listens does.
type fakeSet struct {
	*Set
	gone    atomic.Bool
	changed atomic.Int32
	used    atomic.Int32
	ready   error
}

func newFakeSet(t *testing.T, h http.Handler) *fakeSet {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	f := &fakeSet{}
	f.Set = NewSet(Config{ID: "box1", Log: slog.New(slog.DiscardHandler),
		Ready: func(context.Context) error { return f.ready },
		Dial: func(ctx context.Context, _ int) (net.Conn, error) {
			if f.gone.Load() {
				return nil, fmt.Errorf("dial: %w", agentconn.ErrNothingListens)
			}
			return (&net.Dialer{}).DialContext(ctx, "tcp", srv.Listener.Addr().String())
		},
		Used:    func() { f.used.Add(1) },
		Changed: func() { f.changed.Add(1) },
	})
	t.Cleanup(f.Close)
	return f
}

func getHost(t *testing.T, url, host string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestPreviewServesOnlyItsOwnHost: a request for the preview's address
// reaches the program (with that Host); one for another name that
// resolves to the loopback (DNS rebinding) is refused and never dials.
func TestPreviewServesOnlyItsOwnHost(t *testing.T) {
	var hosts atomic.Int32
	f := newFakeSet(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts.Add(1)
		fmt.Fprint(w, r.Host)
	}))
	x, err := f.Expose(context.Background(), ExposeRequest{Port: 8000})
	if err != nil || x.Port != 8000 || x.URL != fmt.Sprintf("http://127.0.0.1:%d/", x.HostPort) {
		t.Fatalf("expose = %+v, %v", x, err)
	}
	if resp := getHost(t, x.URL, "evil.example:"+fmt.Sprint(x.HostPort)); resp.StatusCode != http.StatusForbidden || hosts.Load() != 0 {
		t.Fatalf("foreign host: %d, %d requests inside", resp.StatusCode, hosts.Load())
	}
	if resp := getHost(t, x.URL, ""); resp.StatusCode != http.StatusOK || hosts.Load() != 1 || f.used.Load() != 1 {
		t.Fatalf("own host: %d, %d requests inside, %d uses", resp.StatusCode, hosts.Load(), f.used.Load())
	}
}

// TestExposeBoundsAndRepeats: the same port gets the same URL; the
// (Max+1)th port is refused; a Set that cannot carry previews says why;
// a closed Set says so and no longer listens.
func TestExposeBoundsAndRepeats(t *testing.T) {
	f := newFakeSet(t, http.NotFoundHandler())
	ctx := context.Background()
	a, _ := f.Expose(ctx, ExposeRequest{Port: 1})
	var b Exposure
	if again, err := f.Expose(ctx, ExposeRequest{Port: 1}); again != a || err != nil {
		t.Fatalf("again = %+v, %v; want %+v", again, err, a)
	}
	for p := 2; p <= Max; p++ {
		x, err := f.Expose(ctx, ExposeRequest{Port: p})
		if err != nil {
			t.Fatal(err)
		}
		if p == 2 {
			b = x
		}
	}
	if _, err := f.Expose(ctx, ExposeRequest{Port: Max + 1}); err == nil || !strings.Contains(err.Error(), "close one") {
		t.Fatalf("over the bound: %v", err)
	}
	if got := f.Records(); len(got) != Max || got[0].Port != 1 || FromRecords(got)[0] != a {
		t.Fatalf("records = %v", got)
	}
	if !f.Unexpose(ExposeRequest{Port: 1}).Closed || f.Unexpose(ExposeRequest{Port: 1}).Closed || int(f.changed.Load()) != Max+1 {
		t.Fatalf("unexpose: changed %d", f.changed.Load())
	}
	f.ready = errors.New("no agent")
	if _, err := f.Expose(ctx, ExposeRequest{Port: 1}); err != f.ready {
		t.Fatalf("not ready: %v", err)
	}
	f.Close()
	if _, err := f.Expose(ctx, ExposeRequest{Port: 2}); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
	for _, x := range []Exposure{a, b} { // closed by Unexpose, by Close
		if listens(x.URL[len("http://") : len(x.URL)-1]) {
			t.Errorf("closed preview %s still listens", x.URL)
		}
	}
}

// listens says whether something accepts a connection at addr. A dial to
// a port no one listens on can, rarely, pick that very port as its own
// and connect to itself (TCP's simultaneous open): that is no listener.
func listens(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	return c.LocalAddr().String() != c.RemoteAddr().String()
}

// TestPreviewDropsDeadProgram: before the program answered, a refused
// dial is a plain 502 (it may not listen yet); after, it closes the
// preview with ClosedHeader and takes it out of the record.
func TestPreviewDropsDeadProgram(t *testing.T) {
	f := newFakeSet(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	f.gone.Store(true)
	x, _ := f.Expose(context.Background(), ExposeRequest{Port: 8000})
	if resp := getHost(t, x.URL, ""); resp.StatusCode != http.StatusBadGateway || resp.Header.Get(ClosedHeader) != "" || len(f.List()) != 1 {
		t.Fatalf("before an answer: %d %q, %d previews", resp.StatusCode, resp.Header.Get(ClosedHeader), len(f.List()))
	}
	f.gone.Store(false)
	if resp := getHost(t, x.URL, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("answer: %d", resp.StatusCode)
	}
	f.gone.Store(true)
	http.DefaultClient.CloseIdleConnections()
	f.tr(t, x).CloseIdleConnections() // the next request dials
	if resp := getHost(t, x.URL, ""); resp.StatusCode != http.StatusBadGateway || resp.Header.Get(ClosedHeader) == "" {
		t.Fatalf("after the program ended: %d %q", resp.StatusCode, resp.Header.Get(ClosedHeader))
	}
	for len(f.List()) != 0 {
		time.Sleep(time.Millisecond)
	}
}

// tr is the transport of x's preview.
func (f *fakeSet) tr(t *testing.T, x Exposure) *http.Transport {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ports[x.Port].tr
}

// TestPreviewStallCutsSilentReader: a host reader that takes nothing for
// agentconn.StallLimit is cut, which ends the connection into the sandbox.
func TestPreviewStallCutsSilentReader(t *testing.T) {
	defer agentconn.SetStallLimit(100 * time.Millisecond)()
	cut := make(chan struct{})
	f := newFakeSet(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		block := make([]byte, 64<<10)
		for {
			if _, err := w.Write(block); err != nil {
				close(cut)
				return
			}
		}
	}))
	x, _ := f.Expose(context.Background(), ExposeRequest{Port: 8000})
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", x.HostPort))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /big HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", x.HostPort)
	if _, err := http.ReadResponse(bufio.NewReaderSize(c, 16), nil); err != nil {
		t.Fatal(err)
	}
	<-cut // then reads nothing: the test times out if the cut never comes
}

// TestPreviewCloseEndsConnections: closing the Set ends the connections
// its previews carry (an upgraded one too), not only its listeners.
func TestPreviewCloseEndsConnections(t *testing.T) {
	ended := make(chan struct{})
	f := newFakeSet(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		io.Copy(io.Discard, brw)
		close(ended)
	}))
	x, _ := f.Expose(context.Background(), ExposeRequest{Port: 8000})
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", x.HostPort))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n", x.HostPort)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	f.Close()
	<-ended
}
