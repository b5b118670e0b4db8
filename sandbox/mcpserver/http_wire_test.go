package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// wireRecorder is an http.RoundTripper for the clients under test: it adds
// the bearer token (when set) and records every JSON-RPC message the
// server sent, in the order the client read them, with the response
// stream (one per HTTP response) each came on.
type wireRecorder struct {
	token string

	mu      sync.Mutex
	msgs    []wireMsg
	streams int
}

// wireMsg is one message from the server.
type wireMsg struct {
	stream int
	raw    []byte
}

func (r *wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.streams++
	stream := r.streams
	r.mu.Unlock()
	resp.Body = &recordingBody{
		ReadCloser: resp.Body, rec: r, stream: stream,
		sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
	}
	return resp, nil
}

func (r *wireRecorder) add(stream int, data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, wireMsg{stream: stream, raw: append([]byte{}, data...)})
}

// messages returns what was recorded so far.
func (r *wireRecorder) messages() []wireMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wireMsg{}, r.msgs...)
}

// recordingBody records a response body as the client reads it: each SSE
// event's data as it completes, or a plain JSON body when it ends. Clients
// may Close it while a Read is under way (mcp-go does, from two
// goroutines), so the bookkeeping has its own lock and never holds it
// across the underlying Read or Close.
type recordingBody struct {
	io.ReadCloser
	rec    *wireRecorder
	stream int
	sse    bool

	mu    sync.Mutex
	buf   []byte
	ended bool
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p[:n]...)
	if b.sse {
		for {
			i := bytes.Index(b.buf, []byte("\n\n"))
			if i < 0 {
				break
			}
			b.rec.add(b.stream, sseData(b.buf[:i]))
			b.buf = b.buf[i+2:]
		}
	}
	if err != nil {
		b.endLocked()
	}
	return n, err
}

func (b *recordingBody) Close() error {
	b.mu.Lock()
	b.endLocked()
	b.mu.Unlock()
	return b.ReadCloser.Close()
}

func (b *recordingBody) endLocked() {
	if !b.ended && !b.sse {
		b.rec.add(b.stream, b.buf)
	}
	b.ended = true
}

// sseData joins the data lines of one SSE event.
func sseData(event []byte) []byte {
	var data []byte
	for _, line := range strings.Split(string(event), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\r"), "data:"); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(v, " ")...)
		}
	}
	return data
}

// progressFaults checks, on the wire, what checkProgressOrder checks for
// stdio, for calls whose output names them ("start N" … "last N", progress
// token "tok-N"): every call had progress, its progress notifications
// together carry its whole output (the last line included: that is the one
// a racy transport loses), none came after its result; and, over HTTP,
// they came on the same response stream as the result. It returns what is
// wrong, one line per fault.
func progressFaults(msgs []wireMsg, calls int) []string {
	var faults []string
	decoded := make([]message, len(msgs))
	lastProgress := map[string]int{}
	streams := map[string]map[int]bool{}
	output := map[string]string{}
	for i, w := range msgs {
		if err := json.Unmarshal(w.raw, &decoded[i]); err != nil {
			faults = append(faults, fmt.Sprintf("the server sent something that is not JSON-RPC: %q", w.raw))
			continue
		}
		if m := decoded[i]; m.Method == "notifications/progress" {
			tok := fmt.Sprint(m.Params.ProgressToken)
			lastProgress[tok] = i
			if streams[tok] == nil {
				streams[tok] = map[int]bool{}
			}
			streams[tok][w.stream] = true
			output[tok] += m.Params.Message
		}
	}
	if len(lastProgress) != calls {
		faults = append(faults, fmt.Sprintf("progress for %d tokens on the wire, want %d", len(lastProgress), calls))
	}
	results := 0
	for i, m := range decoded {
		var r struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if len(m.Result) == 0 || json.Unmarshal(m.Result, &r) != nil || len(r.Content) == 0 {
			continue
		}
		stdout := outputOf(r.Content[0].Text)["stdout"]
		if !strings.HasPrefix(stdout, "start ") {
			continue
		}
		results++
		var n int
		fmt.Sscanf(stdout, "start %d", &n)
		tok := fmt.Sprintf("tok-%d", n)
		last, ok := lastProgress[tok]
		switch {
		case !ok:
			faults = append(faults, fmt.Sprintf("call %d: no progress at all", n))
		case last > i:
			faults = append(faults, fmt.Sprintf("call %d: a progress notification (message %d) came after its result (message %d)", n, last, i))
		case output[tok] != stdout:
			faults = append(faults, fmt.Sprintf("call %d: progress carried %q, the result %q", n, output[tok], stdout))
		case len(streams[tok]) != 1 || !streams[tok][msgs[i].stream]:
			faults = append(faults, fmt.Sprintf("call %d: progress on streams %v, its result on stream %d", n, streams[tok], msgs[i].stream))
		}
	}
	if results != calls {
		faults = append(faults, fmt.Sprintf("%d results on the wire, want %d", results, calls))
	}
	return faults
}
