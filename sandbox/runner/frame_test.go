package runner

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testNonce = "0123456789abcdef0123456789abcdef"

type got struct {
	Frames []string // "kind:payload"
	Err    bool
}

func decodeAll(chunks []string) got {
	var g got
	d := NewDecoder(testNonce, func(f Frame) { g.Frames = append(g.Frames, f.Kind+":"+string(f.Payload)) }, func(error) { g.Err = true })
	for _, c := range chunks {
		if n, err := d.Write([]byte(c)); n != len(c) || err != nil {
			panic("decoder must consume everything without error")
		}
	}
	if (d.Err() != nil) != g.Err {
		panic("Err and fail disagree")
	}
	return g
}

func TestDecoder(t *testing.T) {
	stream := string(AppendFrame(nil, testNonce, KindReady, []byte(`{"pid":7}`))) +
		string(AppendFrame(nil, testNonce, KindOut, []byte("hello\n"+testNonce+" out 3\n"))) +
		string(AppendFrame(nil, testNonce, KindErr, nil)) +
		string(AppendFrame(nil, testNonce, KindDone, []byte(`{"id":1}`)))
	wantFrames := []string{`ready:{"pid":7}`, "out:hello\n" + testNonce + " out 3\n", "err:", `done:{"id":1}`}
	for _, tc := range []struct {
		name   string
		chunks []string
		want   got
	}{
		{"whole", []string{stream}, got{Frames: wantFrames}},
		{"byte by byte", strings.Split(stream, ""), got{Frames: wantFrames}},
		{"split in header and payload", []string{stream[:10], stream[10:60], stream[60:]}, got{Frames: wantFrames}},
		{"garbage", []string{"Traceback (most recent call last):\n"}, got{Err: true}},
		{"wrong nonce", []string{"ffffffffffffffffffffffffffffffff out 1\nx"}, got{Err: true}},
		{"unknown kind", []string{testNonce + " eval 1\nx"}, got{Err: true}},
		{"bad length", []string{testNonce + " out -1\n"}, got{Err: true}},
		{"too long", []string{testNonce + " out 999999999999\n"}, got{Err: true}},
		{"endless header", []string{strings.Repeat("x", 200)}, got{Err: true}},
		{"frames then garbage", []string{stream, "junk\n", stream}, got{Frames: wantFrames, Err: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decodeAll(tc.chunks)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecoderErrorClass(t *testing.T) {
	d := NewDecoder(testNonce, func(Frame) {}, nil)
	_, _ = d.Write([]byte("nonsense\n"))
	if !errors.Is(d.Err(), ErrProtocol) {
		t.Errorf("got %v, want ErrProtocol", d.Err())
	}
}

func TestBootAndArgv(t *testing.T) {
	for _, kind := range []string{Python, Node} {
		if !Known(kind) || len(Argv(kind)) == 0 {
			t.Errorf("%s: not known or no argv", kind)
		}
		b := string(Boot(kind, testNonce))
		head, src, _ := strings.Cut(b, "\n")
		if !strings.HasPrefix(head, testNonce+" ") || len(src) < 1000 || !strings.HasSuffix(head, " "+strconv.Itoa(len(src))) {
			t.Errorf("%s: boot header %q for %d bytes of source", kind, head, len(src))
		}
	}
	if Known("ruby") || Argv("ruby") != nil || Boot("ruby", testNonce) != nil {
		t.Error("ruby has no resident interpreter")
	}
}

// FuzzDecoder: whatever the interpreter writes, split however the pipe
// splits it, the decoder consumes it all without panicking and reports the
// same frames and the same verdict.
func FuzzDecoder(f *testing.F) {
	good := string(AppendFrame(nil, testNonce, KindOut, []byte("hi\n"))) + string(AppendFrame(nil, testNonce, KindDone, []byte(`{"id":1}`)))
	f.Add([]byte(good), uint8(3))
	f.Add([]byte(testNonce+" out 5\nab"), uint8(1))
	f.Add([]byte(testNonce+" fig 00000000000000000000000000000003\nabc"), uint8(7))
	f.Add([]byte(good+"junk"+good), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		var chunks []string
		n := int(step)%17 + 1
		for i := 0; i < len(data); i += n {
			chunks = append(chunks, string(data[i:min(i+n, len(data))]))
		}
		whole := decodeAll([]string{string(data)})
		split := decodeAll(chunks)
		if !cmp.Equal(whole, split) {
			t.Fatalf("decoding depends on how the stream is split:\nwhole %+v\nsplit %+v", whole, split)
		}
	})
}

// The gate keeps what it admits of a frame and the decoder reads past the
// rest without buffering it, whatever the chunking; fig frames may announce
// more than MaxPayload (up to MaxFigure), other kinds may not.
func TestDecoderGate(t *testing.T) {
	big := strings.Repeat("f", 3000)
	stream := string(AppendFrame(nil, testNonce, KindFig, []byte(big))) +
		string(AppendFrame(nil, testNonce, KindOut, []byte("0123456789"))) +
		string(AppendFrame(nil, testNonce, KindFig, []byte("small"))) +
		string(AppendFrame(nil, testNonce, KindDone, []byte(`{"id":1}`)))
	gate := func(kind string, size int) int {
		switch {
		case kind == KindFig && size > 100:
			return 0 // refused: read past
		case kind == KindOut:
			return 4 // a head only
		}
		return size
	}
	want := []string{"fig:0/3000:", "out:4/10:0123", "fig:5/5:small", `done:8/8:{"id":1}`}
	for _, tc := range []struct {
		name   string
		chunks []string
	}{
		{"whole", []string{stream}},
		{"byte by byte", strings.Split(stream, "")},
		{"in three", []string{stream[:50], stream[50:3100], stream[3100:]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			d := NewDecoder(testNonce, func(f Frame) {
				got = append(got, f.Kind+":"+strconv.Itoa(len(f.Payload))+"/"+strconv.Itoa(f.Size)+":"+string(f.Payload))
			}, func(err error) { t.Errorf("protocol error: %v", err) }).Gate(gate)
			for _, c := range tc.chunks {
				_, _ = d.Write([]byte(c))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if cap(d.buf) > keepBuffer {
				t.Errorf("the decoder kept a %d-byte buffer", cap(d.buf))
			}
		})
	}
	for _, tc := range []struct {
		header string
		bad    bool
	}{
		{KindOut + " " + strconv.Itoa(MaxPayload), false},
		{KindOut + " " + strconv.Itoa(MaxPayload+1), true},
		{KindDone + " " + strconv.Itoa(MaxPayload+1), true},
		{KindFig + " " + strconv.Itoa(MaxPayload+1), false},
		{KindFig + " " + strconv.Itoa(MaxFigure+1), true},
	} {
		d := NewDecoder(testNonce, func(Frame) {}, nil).Gate(func(string, int) int { return 0 })
		_, _ = d.Write([]byte(testNonce + " " + tc.header + "\n"))
		if (d.Err() != nil) != tc.bad {
			t.Errorf("%s: error %v, want an error: %v", tc.header, d.Err(), tc.bad)
		}
	}
}

// A large frame that is kept grows the decoder's buffer only for that
// frame.
func TestDecoderGivesBackLargeBuffer(t *testing.T) {
	payload := []byte(strings.Repeat("x", MaxPayload))
	stream := AppendFrame(nil, testNonce, KindOut, payload)
	n := 0
	d := NewDecoder(testNonce, func(f Frame) { n += len(f.Payload) }, nil)
	for i := 0; i < len(stream); i += 4096 {
		_, _ = d.Write(stream[i:min(i+4096, len(stream))])
	}
	if n != MaxPayload || cap(d.buf) > keepBuffer {
		t.Errorf("got %d bytes, buffer of %d kept", n, cap(d.buf))
	}
}
