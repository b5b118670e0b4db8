package sandbox_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestFakeTrafficRecorded: an allowlist sandbox's proxy serves one
// allowed request and refuses two hosts (evil.example twice, and a
// 253-character name) and a request whose host has control characters
// (unusable, so logged but not counted as a host); its state record (for the window),
// sandbox_list's network object and the logs resource's network lines all
// come from the same counters and agree; the record is bounded, and goes
// with the sandbox.
func TestFakeTrafficRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	t.Cleanup(srv.Close)
	entry := strings.TrimPrefix(srv.URL, "http://")
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng, be := fakeEngine(t, st, func(c *config.Config) { c.Network.AllowDomains = []string{entry} })
	sb := mustCreate(t, eng, sandbox.CreateRequest{})

	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".io"
	if code := proxyRequest(t, eng, sb.ID, "GET http://"+entry+"/x HTTP/1.1\r\nHost: "+entry+"\r\nConnection: close\r\n\r\n"); code != http.StatusOK {
		t.Fatalf("allowed request answered %d", code)
	}
	for _, target := range []string{"evil.example:443", long + ":443", "evil.example:443", "bad\x1b[2J\u202ename:443"} {
		if code := proxyRequest(t, eng, sb.ID, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"); code < 400 {
			t.Fatalf("CONNECT %q answered %d", target, code)
		}
	}

	listed := eng.Network(sb.ID) // sandbox_list's source
	if listed.Stats == nil || listed.Stats.Allowed != 1 || listed.Stats.Refused != 3 || listed.Stats.BytesIn == 0 {
		t.Fatalf("sandbox_list's network: %+v", listed.Stats)
	}
	var rec state.Record
	waitFor(t, "the record's counters", 10*time.Second, func() bool {
		rec, err = st.ReadRecord(sb.ID)
		return err == nil && rec.Traffic != nil && rec.Traffic.RefusedConns == 3
	})
	want := &state.NetworkSummary{Allowed: []string{entry}, AllowedTotal: 1, AllowedConns: 1, RefusedConns: 3,
		BytesIn: listed.Stats.BytesIn, BytesOut: listed.Stats.BytesOut}
	for _, h := range listed.Stats.RefusedHosts {
		want.Refused = append(want.Refused, state.HostHits{Host: h.Host, Count: h.Count})
	}
	if d := cmp.Diff(want, rec.Traffic); d != "" {
		t.Errorf("record vs sandbox_list (-want +got):\n%s", d)
	}
	for _, h := range rec.Traffic.Refused {
		if strings.ContainsAny(h.Host, "\x1b\u202e") {
			t.Errorf("record holds %q", h.Host)
		}
	}
	if rec.Traffic.Refused[0] != (state.HostHits{Host: "evil.example:443", Count: 2}) {
		t.Errorf("refused hosts %+v: evil.example:443 twice, the newest", rec.Traffic.Refused)
	}

	infos, err := inventory.Lister{Backend: be, State: st}.List(context.Background())
	if err != nil || len(infos) != 1 {
		t.Fatalf("lister: %v %+v", err, infos)
	}
	if got := infos[0].Traffic; !got.Known || got.RefusedConns != 3 || len(got.RefusedHosts()) != len(want.Refused) || got.Entries()[0] != entry {
		t.Errorf("the window's view: %+v", got)
	}

	logs := eng.NetworkLog(sb.ID)
	for _, s := range []string{"=== network: 5 connections", "GET " + entry + " allowed", "CONNECT evil.example:443 refused: ", "CONNECT " + long + ":443 refused"} {
		if !strings.Contains(logs, s) {
			t.Errorf("logs lack %q:\n%s", s, logs)
		}
	}
	if strings.ContainsAny(logs, "\x1b\u202e") {
		t.Errorf("logs hold control characters:\n%q", logs)
	}
	if testing.Verbose() {
		t.Log(logs)
	}

	if _, err := eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReadRecord(sb.ID); err == nil {
		t.Error("the record outlived the sandbox")
	}
}

// proxyRequest sends a request head to sandbox id's proxy, as a program
// in the sandbox would, and returns the status answered.
func proxyRequest(t *testing.T, eng *sandbox.Engine, id, head string) int {
	t.Helper()
	client, server := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- sandbox.ServeProxyForTest(context.Background(), eng, id, server) }()
	defer func() {
		client.Close()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	_ = client.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = io.WriteString(client, head) }()
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatalf("%q: %v", head, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
