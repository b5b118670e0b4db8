package proto

// Start asks the agent to run a command. Env is added to the agent's own
// environment (which is what the engine gives any exec: the image's);
// Stdin, when not nil, is the command's whole stdin, else it reads
// /dev/null.
type Start struct {
	ID    int      `json:"id"`
	Argv  []string `json:"argv"`
	Env   []string `json:"env"`
	Dir   string   `json:"dir"`
	Stdin *[]byte  `json:"stdin"`
}

// Kill asks the agent to kill command ID and everything it started.
type Kill struct {
	ID int `json:"id"`
}

// Exit says how a command ended: its exit code, or 128 + the signal that
// killed it. Error, when set, says why it could not be started. US is the
// agent's own account of the command, in microseconds: from its start
// frame to its end (for the engine's timing log only; hostile like all
// the agent says).
type Exit struct {
	ID    int    `json:"id"`
	Code  int    `json:"code"`
	Error string `json:"error,omitempty"`
	US    int64  `json:"us,omitempty"`
}

// File operations.
const (
	OpWrite = "write"
	OpRead  = "read"
	OpList  = "list"
)

// File asks the agent for one file tool's work on Path (clean, absolute,
// in /workspace or /tmp), done as the sandbox user, following symlinks
// only while they stay inside those areas:
//
//   - OpWrite replaces the file with Data (or appends it, Append), making
//     missing parent directories; the result may not exceed Max bytes.
//   - OpRead sends at most Max bytes from Offset.
//   - OpList sends the entries of a directory (all below it, Recursive),
//     at most Limit, or the entry of a file.
type File struct {
	ID        int    `json:"id"`
	Op        string `json:"op"`
	Path      string `json:"path"`
	Data      []byte `json:"data,omitempty"`
	Append    bool   `json:"append,omitempty"`
	Offset    int64  `json:"offset,omitempty"`
	Max       int64  `json:"max,omitempty"`
	Recursive bool   `json:"recursive,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

// FileDone ends a File's answer. Path is the file acted on (links
// followed); Size its size; N the bytes written or sent, or the entries
// sent; Truncated says a listing stopped early. Err, when set, is a class:
// "notexist", "isdir", "notreg", "notdir", "perm", "nospace", "linkout"
// (Msg: the link, a NUL, its target), "loop", "offset", "toobig", "bad",
// "io"; Msg is the path concerned or the system's message.
type FileDone struct {
	ID        int    `json:"id"`
	Path      string `json:"path,omitempty"`
	Size      int64  `json:"size"`
	N         int64  `json:"n"`
	Truncated bool   `json:"truncated,omitempty"`
	Err       string `json:"err,omitempty"`
	Msg       string `json:"msg,omitempty"`
}

// ListEntry is one entry of an OpList answer: its path relative to the
// directory listed ("" for a file listed itself), size, mode (Go's
// fs.FileMode bits), modification time (Unix seconds) and, for a symlink,
// its target.
type ListEntry struct {
	P string `json:"p"`
	S int64  `json:"s"`
	M uint32 `json:"m"`
	T int64  `json:"t"`
	L string `json:"l,omitempty"`
}

// Streams: byte streams multiplexed over the agent's connection, each a
// TCP connection on the sandbox's own loopback. The engine opens one with
// a Dial (ids odd, increasing); the agent answers with a Dialed. Then both
// ends send "data" frames (the stream's id, a newline and at most
// StreamChunk bytes), "credit" frames (a Credit) and at most one "eof"
// frame each (a StreamID: no more data from this end), or a "reset" (a
// StreamID: the stream is abandoned, both ways). A sender never has more
// than StreamWindow bytes of a stream unacknowledged: each end starts with
// that much credit and gets more as the other end passes bytes on.

// StreamWindow is the credit the agent starts with on each stream: the
// most the server buffers of a stream, what it has not read yet. It is
// also the server's credit with an agent that announces no window.
const StreamWindow = 128 << 10

// AgentWindow is the credit the server starts with on each stream of an
// agent whose ready frame says "window": the most the agent buffers of a
// stream (in the sandbox's memory, not the server's). It is larger than
// StreamWindow so that a download into the sandbox needs fewer credit
// frames back through the engine's attach stream; a server never takes a
// window larger than this from an agent.
const AgentWindow = 1 << 20

// StreamChunk bounds a data frame's bytes.
const StreamChunk = 32 << 10

// Dial asks the agent to connect to Port on the sandbox's loopback
// (127.0.0.1) as stream ID.
type Dial struct {
	ID   int `json:"id"`
	Port int `json:"port"`
}

// Dialed answers a Dial: Err, when set, says why the connection failed.
type Dialed struct {
	ID  int    `json:"id"`
	Err string `json:"err,omitempty"`
}

// Credit lets the other end send N more bytes on stream ID.
type Credit struct {
	ID int `json:"id"`
	N  int `json:"n"`
}

// StreamID names a stream (the payload of eof and reset).
type StreamID struct {
	ID int `json:"id"`
}

// Listen asks the agent to listen on Port of the sandbox's loopback
// (127.0.0.1; 0 for one it picks) as listener ID (ids increasing). It
// answers with a Listening, then hands each connection it accepts to the
// engine as a stream of its own: an "accept" frame (an Accept; stream ids
// even and increasing), after which the stream is as a dialed one. An
// "unlisten" frame (a StreamID naming the listener) closes it.
type Listen struct {
	ID   int `json:"id"`
	Port int `json:"port"`
}

// Listening answers a Listen: the port listened on, or Err.
type Listening struct {
	ID   int    `json:"id"`
	Port int    `json:"port"`
	Err  string `json:"err,omitempty"`
}

// Accept opens stream ID for a connection listener Listener accepted.
type Accept struct {
	ID       int `json:"id"`
	Listener int `json:"listener"`
}
