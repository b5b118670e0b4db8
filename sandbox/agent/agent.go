package agent

//go:generate go run ./internal/build

import (
	"compress/gzip"
	_ "embed" // the agent's binaries
	"io"
	"strings"
	"sync"
	"unsafe"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent/proto"
)

var (
	//go:embed prebuilt/mcp-sandbox-agent-linux-amd64.gz
	amd64 string
	//go:embed prebuilt/mcp-sandbox-agent-linux-arm64.gz
	arm64 string
)

// Frame kinds beyond package runner's.
const (
	KindStart = "start" // engine → agent: a Start
	KindKill  = "kill"  // engine → agent: a Kill
	// KindKillAll (no payload) has the agent kill every process of the
	// sandbox user, then exit: the sandbox is being stopped.
	KindKillAll = "killall"
	KindExit    = "exit" // agent → engine: an Exit
	KindFile    = "file" // engine → agent: a File
	// KindFileDone (agent → engine) ends a File's answer: a FileDone.
	KindFileDone = "filedone"

	// Streams (see package proto): both ways unless marked.
	KindDial   = "dial"   // engine → agent: a Dial
	KindDialed = "dialed" // agent → engine: a Dialed
	KindData   = "data"   // the stream's id, a newline, bytes
	KindCredit = "credit" // a Credit
	KindEOF    = "eof"    // a StreamID: no more data from this end
	KindReset  = "reset"  // a StreamID: the stream is abandoned
	// Listeners (see package proto's Listen).
	KindListen    = "listen"    // engine → agent: a Listen
	KindListening = "listening" // agent → engine: a Listening
	KindAccept    = "accept"    // agent → engine: an Accept, opening a stream
	KindUnlisten  = "unlisten"  // engine → agent: a StreamID naming a listener
)

// StreamWindow and StreamChunk bound a stream's buffered and framed bytes.
const (
	StreamWindow = proto.StreamWindow
	AgentWindow  = proto.AgentWindow
	StreamChunk  = proto.StreamChunk
)

// FilePrefix starts the name of the agent's file in a sandbox; the agent
// removes the file it was started from when its name starts so.
const FilePrefix = ".mcp-sandbox-agent-"

// MaxStdin bounds the stdin a Start carries (base64 in JSON, within the
// agent's 32 MiB frames); a command with more goes through the engine.
const MaxStdin = 20 << 20

// MaxFrame bounds a frame the engine accepts from an agent: output comes
// in chunks of 32 KiB, everything else is small.
const MaxFrame = 64 << 10

// The protocol's messages (documented in package proto, which the agent
// itself uses).
type (
	Start     = proto.Start
	Kill      = proto.Kill
	Exit      = proto.Exit
	File      = proto.File
	FileDone  = proto.FileDone
	ListEntry = proto.ListEntry
	Dial      = proto.Dial
	Dialed    = proto.Dialed
	Credit    = proto.Credit
	StreamID  = proto.StreamID
	Listen    = proto.Listen
	Listening = proto.Listening
	Accept    = proto.Accept
)

// File operations.
const (
	OpWrite = proto.OpWrite
	OpRead  = proto.OpRead
	OpList  = proto.OpList
)

// Open returns the agent for a Linux architecture, as Go or the engine
// names it (amd64, x86_64, arm64, aarch64), decompressing as it is read,
// or nil. Closing it hands the embedded copy's memory back to the system
// where that can be done (it stays in the page cache, for the next copy).
func Open(arch string) io.ReadCloser {
	gz := compressed(arch)
	if gz == "" {
		return nil
	}
	r, err := gzip.NewReader(strings.NewReader(gz))
	if err != nil {
		return nil // not what go generate made: no agent
	}
	return &opened{r: r, gz: gz}
}

// Has reports whether there is an agent for arch.
func Has(arch string) bool { return compressed(arch) != "" }

// Compressed returns the embedded (gzip) agent for arch, or nil.
func Compressed(arch string) []byte { return []byte(compressed(arch)) }

func compressed(arch string) string {
	switch strings.ToLower(arch) {
	case "amd64", "x86_64":
		return amd64
	case "arm64", "aarch64":
		return arm64
	}
	return ""
}

// opened is safe for a Close while a Read is under way: the engine's
// stdin copy may still be reading when the exec that copies the agent in
// has given up; that Read then ends, and later ones see io.ErrClosedPipe.
type opened struct {
	mu     sync.Mutex
	r      *gzip.Reader
	gz     string
	closed bool
}

func (o *opened) Read(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return 0, io.ErrClosedPipe
	}
	return o.r.Read(p)
}

func (o *opened) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	err := o.r.Close()
	release(unsafe.Slice(unsafe.StringData(o.gz), len(o.gz)))
	return err
}
