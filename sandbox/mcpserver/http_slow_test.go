package mcpserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
)

// slowConn opens a connection to addr, sends head, then trickles a byte
// every 200ms until the server closes it or stop is closed. It returns
// what the server answered (its first line, "" when none) and whether the
// connection was closed before deadline.
// started is called once the head is sent.
func slowConn(addr, head string, deadline time.Time, stop <-chan struct{}, started func()) (status string, closed bool, err error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		started()
		return "", false, err
	}
	defer c.Close()
	_, err = io.WriteString(c, head)
	started()
	if err != nil {
		return "", true, nil // already refused
	}
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	_ = c.SetReadDeadline(deadline)
	br := bufio.NewReader(c)
	status, _ = br.ReadString('\n')
	_, err = io.Copy(io.Discard, br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return strings.TrimSpace(status), false, nil
	}
	return strings.TrimSpace(status), true, nil // EOF or reset: closed
}

// TestHTTPSlowClients: 300 trickled bodies without a token are all
// answered 401 and closed within 20 s (Go's server would otherwise read
// each body, as slowly as it comes, before answering), while 700 more
// connections trickle their headers (over the caps of open connections);
// once they are all open, a real client with the
// token is answered, a trickled body with the token is cut after the body
// timeout, and a call that runs longer than that timeout is not cut. The
// real listener caps and timeouts of ServeStreamableHTTP, on loopback.
func TestHTTPSlowClients(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections for up to 20 s")
	}
	const conns = 1000 // 300 without a token, 700 slow headers
	defer mcpserver.SetBodyTimeout(time.Second)()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- mcpserver.ServeProbe(ctx, ln, probeToken, 2*time.Second) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	addr := ln.Addr().String()
	url := "http://" + addr + mcpserver.HTTPPath

	stop := make(chan struct{})
	defer close(stop)
	deadline := time.Now().Add(20 * time.Second)
	noToken := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{", mcpserver.HTTPPath, addr)
	slowHead := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\n", mcpserver.HTTPPath, addr)
	var wg, started sync.WaitGroup
	var mu sync.Mutex
	var faults []string
	for i := range conns {
		head := noToken
		if i%10 >= 3 {
			head = slowHead
		}
		started.Add(1)
		wg.Go(func() {
			status, closed, err := slowConn(addr, head, deadline, stop, started.Done)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				faults = append(faults, fmt.Sprintf("conn %d: %v", i, err))
			case !closed:
				faults = append(faults, fmt.Sprintf("conn %d still open after 20 s (answer %q)", i, status))
			case head == noToken && status != "" && !strings.Contains(status, "401"):
				faults = append(faults, fmt.Sprintf("conn %d without a token answered %q", i, status))
			}
		})
	}

	started.Wait()
	status, _, body := rawSession(t, url, http.MethodPost, "2026-07-28", "", modernList)
	if status != http.StatusOK || !strings.Contains(body, `"probe"`) {
		t.Errorf("a real request under slow connections: %d %q", status, body)
	}
	checkBodyTimeout(t, addr)
	checkLongCall(t, url)

	wg.Wait()
	if len(faults) > 0 {
		t.Errorf("%d of %d slow connections faulted, e.g.:\n%s", len(faults), conns, strings.Join(faults[:min(5, len(faults))], "\n"))
	}
}

// checkBodyTimeout: a body trickled with the token is cut after the body
// timeout (1 s here), well within 20 s.
func checkBodyTimeout(t *testing.T, addr string) {
	t.Helper()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200000\r\n\r\n{", mcpserver.HTTPPath, addr, probeToken)
	stop := make(chan struct{})
	defer close(stop)
	_, closed, err := slowConn(addr, head, time.Now().Add(20*time.Second), stop, func() {})
	if err != nil || !closed {
		t.Errorf("a trickled body with the token: closed %v, err %v; want it cut after the body timeout", closed, err)
	}
}

// checkLongCall: a call running longer than the body timeout (the probe
// pauses 2 s) is answered whole: the body deadline was cleared.
func checkLongCall(t *testing.T, url string) {
	t.Helper()
	status, id, body := rawSession(t, url, http.MethodPost, "", "", sessionInit)
	if status != http.StatusOK {
		t.Fatalf("initialize: %d %s", status, body)
	}
	const call = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"probe","arguments":{"n":7}}}`
	status, _, body = rawSession(t, url, http.MethodPost, "2025-11-25", id, call)
	if status != http.StatusOK || !strings.Contains(body, "last 7") {
		t.Errorf("a call longer than the body timeout: %d %q", status, body)
	}
}
