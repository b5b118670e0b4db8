// Package proto holds the messages of the command agent's protocol (see
// package agent): the server and the agent both use these types, so the
// two ends cannot drift apart. It imports nothing, so the agent stays
// small.
//
// # Streams
//
// The engine sends "dial" (id, port; ids odd and increasing) and the agent
// connects to 127.0.0.1:port and answers "dialed" (id, error if any); then
// both ends send "data" (id, a newline, at most 32 KiB), "credit" (id, n),
// at most one "eof" (no more data from this end; the agent half-closes its
// socket) and "reset" (abandoned both ways). Each end sends no more than
// the credit the other has given: the agent starts each stream with
// [StreamWindow] (what the server buffers), the server with the window the
// agent's "ready" announces ([AgentWindow] from version 3; one outside
// 32 KiB … 1 MiB, or none, counts as [StreamWindow]). Credit goes back only
// as the reader takes the bytes, a quarter window at a time, so a stream
// nobody reads stops its sender and holds up no other. The server opens at
// most 80 streams per agent (previews 64 of them) and 256 over all its
// agents, and resets a stream that stands still for 60 s with its window
// full: nothing read of what waits, or no credit for what it would send.
//
// The other way (a proxy inside the sandbox), the engine sends "listen"
// (listener id, port; 0 lets the agent pick), the agent answers
// "listening" (id, port, error) and sends "accept" (stream id, even and
// increasing; listener id) for each connection, which is then a stream
// like a dialed one; "unlisten" closes the listener.
//
// The server treats what the agent says as hostile: a frame over 64 KiB,
// an unknown kind, a malformed payload, a frame about a stream id it never
// opened, an accept with a wrong id or for a listener never asked for, or
// a listening not asked for ends the connection; data beyond the credit,
// after eof or before dialed, a second eof or dialed, or credit beyond the
// window resets that stream alone. A frame the agent does not take in
// before the call's timeout, or a kill not answered within 15 s, ends the
// connection, and the next command starts a fresh agent (after three,
// commands go through the engine). Closing a stream on the server ends it
// as closing a TCP socket does: eof when the program inside had finished
// sending, else reset.
//
// Imports: none
package proto
