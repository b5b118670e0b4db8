package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestOrderedWriter checks the writer's one promise: notifications queued
// before a response are written before it, whatever the goroutines do. It
// runs in a synctest bubble, so the writer's shutdown grace passes on the
// bubble's clock; even rounds let the writer deliver before the shutdown,
// odd ones shut it down at once (the response then goes out on the way
// out).
func TestOrderedWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for round := 0; round < 200; round++ {
			var out bytes.Buffer
			notes := make(chan mcp.JSONRPCNotification, 16)
			w := &orderedWriter{out: &out, responses: make(chan reply, 4), notes: notes, failed: make(chan struct{})}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { w.run(ctx); close(done) }()
			for i := 0; i < 5; i++ {
				notes <- mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/progress"}}
			}
			w.send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			if round%2 == 0 {
				synctest.Wait()
			}
			cancel()
			<-done
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 6 || !strings.Contains(lines[5], `"id":1`) {
				t.Fatalf("round %d: the response did not come last:\n%s", round, out.String())
			}
		}
	})
}

func TestReadLineTooLong(t *testing.T) {
	in := strings.NewReader(strings.Repeat("x", 100) + "\n" + `{"ok":1}` + "\n")
	r := bufio.NewReaderSize(in, 16)
	if _, err := readLine(r, 50); err != errLineTooLong {
		t.Fatalf("want errLineTooLong, got %v", err)
	}
	line, err := readLine(r, 50)
	if err != nil || string(line) != "{\"ok\":1}\n" {
		t.Fatalf("the next line: %q %v", line, err)
	}
}

func TestErrorResponseIsJSONRPC(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(errorResponse(nil, mcp.PARSE_ERROR, "bad"), &m); err != nil || m["jsonrpc"] != "2.0" {
		t.Fatalf("%v %v", m, err)
	}
}

// TestOrderedWriterClientGone: a client that closed its end (the write
// fails) or stopped reading (the write never returns) ends the session
// (failed closes), and a writer stuck on such a client still stops when
// the session ends, without the stuck write returning.
func TestOrderedWriterClientGone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		closed bool // the client closed its end; else it stopped reading
		cancel bool // the session ends (a signal) while the write hangs
	}{
		{"closed its end", true, false},
		{"stopped reading", false, false},
		{"stopped reading, then a signal", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pr, pw := io.Pipe()
				if tc.closed {
					pr.CloseWithError(syscall.EPIPE)
				}
				w := &orderedWriter{out: pw, responses: make(chan reply, 4), notes: make(chan mcp.JSONRPCNotification, 4), failed: make(chan struct{})}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { w.run(ctx); close(done) }()
				w.send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
				if tc.cancel {
					synctest.Wait()
					cancel()
					<-done
				}
				<-w.failed
				cancel()
				<-done
				pr.Close() // lets the stuck write return, so the bubble can end
			})
		})
	}
}

// TestOrderedWriterSlowClient: a client that takes a long message slowly
// (a chunk every 10 s, minutes in all) is not taken for gone: the write
// deadline counts from the last chunk taken.
func TestOrderedWriterSlowClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		w := &orderedWriter{out: pw, responses: make(chan reply, 4), notes: make(chan mcp.JSONRPCNotification, 4), failed: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.run(ctx); close(done) }()
		msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 20*writeChunk) + `"}}`)
		w.send(ctx, msg)
		var got int
		buf := make([]byte, writeChunk)
		for got < len(msg)+1 {
			time.Sleep(10 * time.Second)
			n, err := pr.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
		select {
		case <-w.failed:
			t.Fatal("a slow client that kept reading was taken for gone")
		default:
		}
		cancel()
		<-done
		pr.Close()
	})
}

// TestReadMessagesStopsHandingOn: the reader hands each message on itself,
// in order, and hands on nothing once readMessages has returned, not even
// a line its blocked read takes afterwards.
func TestReadMessagesStopsHandingOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &Server{}
		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		var got []string
		var replies int
		done := make(chan error, 1)
		go func() {
			done <- s.readMessages(ctx, pr, func(raw []byte, id any, isRequest bool) {
				got = append(got, string(raw))
			}, func(context.Context, []byte) { replies++ }, make(chan struct{}))
		}()
		for _, l := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `not json`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
			if _, err := pw.Write([]byte(l + "\n")); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if len(got) != 2 || !strings.Contains(got[0], `"id":1`) || !strings.Contains(got[1], "initialized") || replies != 1 {
			t.Fatalf("handed on %q with %d error replies; want the ping, then the notification, and one reply for the bad line", got, replies)
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("readMessages returned %v, want context.Canceled", err)
		}
		// The reader was blocked in a read when ctx ended: what it reads
		// now goes nowhere.
		go func() { _, _ = pw.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n")) }()
		synctest.Wait()
		if len(got) != 2 {
			t.Fatalf("a message read after readMessages returned was handed on: %q", got)
		}
		pw.Close()
	})
}
