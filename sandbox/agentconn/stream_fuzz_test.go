package agentconn

import (
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// FuzzAgentStreamFrames feeds what a hostile agent may say to a
// connection with two open streams and a listener: whatever it is, the server neither
// panics nor holds more than a window per stream, more streams than the
// cap, or credit beyond the window.
func FuzzAgentStreamFrames(f *testing.F) {
	fr := func(kind, payload string) string {
		return string(runner.AppendFrame(nil, testNonce, kind, []byte(payload)))
	}
	for _, seed := range []string{
		fr(agent.KindData, "1\nhello") + fr(agent.KindEOF, `{"id":1}`),
		fr(agent.KindCredit, `{"id":3,"n":5}`) + fr(agent.KindReset, `{"id":3}`) + fr(agent.KindData, "3\nlate"),
		fr(agent.KindDialed, `{"id":1}`) + fr(agent.KindDialed, `{"id":5}`),
		fr(agent.KindData, "1\n"+strings.Repeat("x", agent.StreamChunk)) + fr(agent.KindData, "1\n"+strings.Repeat("y", agent.StreamChunk)),
		fr(agent.KindData, "-1\nx") + fr(agent.KindCredit, `{"id":1,"n":-1}`),
		fr(agent.KindExit, `{"id":1,"code":0}`) + fr(agent.KindData, "01\nx"),
		testNonce + " data 99999999999999\n",
		fr(agent.KindAccept, `{"id":2,"listener":1}`) + fr(agent.KindData, "2\nin") + fr(agent.KindAccept, `{"id":2,"listener":1}`),
		fr(agent.KindListening, `{"id":1,"port":5}`) + fr(agent.KindAccept, `{"id":4,"listener":2}`),
		strings.Repeat(fr(agent.KindData, "3\n"+strings.Repeat("z", agent.StreamChunk)), agent.StreamWindow/agent.StreamChunk+1),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fa := newTestConn(t)
		fa.dial(8000)
		fa.dial(8001)
		fa.listen()
		_, _ = fa.dec.Write(in)
		m := &fa.c.mux
		m.mu.Lock()
		streams := make([]*Stream, 0, len(m.streams))
		for _, s := range m.streams {
			streams = append(streams, s)
		}
		n := len(m.streams)
		m.mu.Unlock()
		if n > MaxStreams {
			t.Fatalf("%d streams from frames the agent sent", n)
		}
		for _, s := range streams {
			s.mu.Lock()
			held, c, credit, avail := len(s.buf)-s.r, cap(s.buf), s.credit, s.avail
			s.mu.Unlock()
			if held > agent.StreamWindow || c > agent.StreamWindow || credit > agent.StreamWindow || held+avail > agent.StreamWindow || avail < 0 {
				t.Fatalf("stream %d holds %d bytes (cap %d), credit %d, avail %d", s.id, held, c, credit, avail)
			}
		}
	})
}
