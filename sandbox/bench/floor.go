package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// The floor of sandbox_exec true on this machine: what the same call costs
// with nothing of MCP Sandbox's between the engine and the command, so the
// row's target can be read against what the machine allows. Its parts are
// each measured in the same rounds, each after a `docker exec true` of its
// own and the pause every timed side has (settle), as the row's own call
// follows a docker CLI baseline:
//
//   - a call of a tool the server does not have: the stdio round trip and
//     the MCP library's dispatch, with no tool run (a ping would do, but
//     the client library answers it itself under the newer protocol);
//   - a line written to, and one read back from, a resident python3 in the
//     baseline's container through the engine's attach stream (the API
//     call the agent's connection uses, read with the docker library's own
//     client), the line sent back once that python3 has had `true` run by
//     a shell it started ahead, as the agent does (posix_spawn of
//     `/bin/sh -c 'read -r l <&3; exec 3<&-; eval "$l"'`, as a C program
//     would, then, on the line, `true` written to its fd 3 and the shell
//     reaped; the next one is started after the answer);
//   - that command, as the python3 timed it.

// floorLoop is the resident python3: one line in, one command, its time
// in microseconds out.
const floorLoop = `import os, sys, time
r, w = sys.stdin.buffer, sys.stdout.buffer
def ahead():
    rd, wr = os.pipe()
    pid = os.posix_spawn('/bin/sh', ['sh', '-c', 'read -r l <&3; exec 3<&-; eval "$l"'], os.environ,
        file_actions=[(os.POSIX_SPAWN_DUP2, rd, 3), (os.POSIX_SPAWN_CLOSE, wr), (os.POSIX_SPAWN_OPEN, 0, '/dev/null', os.O_RDONLY, 0)])
    os.close(rd)
    return pid, wr
pid, wr = ahead()
while r.readline():
    t = time.perf_counter_ns()
    os.write(wr, b'true\n')
    os.close(wr)
    os.waitpid(pid, 0)
    w.write(b'%d\n' % ((time.perf_counter_ns() - t) // 1000))
    w.flush()
    pid, wr = ahead()
`

// Floor is sandbox_exec true's floor: the medians of its parts.
type Floor struct {
	N       int           `json:"n"`
	Ping    time.Duration `json:"ping_ns"`    // a call of a tool the server does not have
	Attach  time.Duration `json:"attach_ns"`  // round trip through the attach stream, command included
	Command time.Duration `json:"command_ns"` // the command alone, as timed in the container
	// Why says why there is no floor (the engine's API could not be
	// reached as the docker library's client, say).
	Why string `json:"why,omitempty"`
}

// Total is the floor of the whole call.
func (f Floor) Total() time.Duration { return f.Ping + f.Attach }

// floorProbe is the resident python3 and its stream.
type floorProbe struct {
	cli  *client.Client
	conn net.Conn
	rd   *bufio.Reader
	hdr  [8]byte
}

// startFloor starts the resident python3 in container cid.
func startFloor(ctx context.Context, cid string) (*floorProbe, error) {
	cli, _, err := dockerhost.NewClient(ctx, dockerhost.Options{})
	if err != nil {
		return nil, err
	}
	ex, err := cli.ContainerExecCreate(ctx, cid, container.ExecOptions{
		Cmd: []string{"python3", "-u", "-c", floorLoop}, AttachStdin: true, AttachStdout: true, AttachStderr: true,
	})
	if err == nil {
		resp, aerr := cli.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
		if aerr == nil {
			return &floorProbe{cli: cli, conn: resp.Conn, rd: resp.Reader}, nil
		}
		err = aerr
	}
	_ = cli.Close()
	return nil, err
}

// floorAnswer bounds a round of the floor's probe: a python3 that does
// not answer fails the probe, not the benchmark.
const floorAnswer = 10 * time.Second

// round sends one line and reads the python3's answer: the round trip,
// and the command as it timed it.
func (p *floorProbe) round() (rt, command time.Duration, err error) {
	if err := p.conn.SetDeadline(time.Now().Add(floorAnswer)); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if _, err := p.conn.Write([]byte("go\n")); err != nil {
		return 0, 0, err
	}
	var line []byte
	// The stream is the engine's multiplexed one: an 8-byte header (its
	// first byte the stream, 1 stdout, 2 stderr; its last four the length)
	// before each chunk.
	for !strings.HasSuffix(string(line), "\n") {
		if _, err := io.ReadFull(p.rd, p.hdr[:]); err != nil {
			return 0, 0, err
		}
		n := binary.BigEndian.Uint32(p.hdr[4:])
		if n > 4096 {
			return 0, 0, fmt.Errorf("floor probe: a %d-byte chunk", n)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(p.rd, b); err != nil {
			return 0, 0, err
		}
		if p.hdr[0] == 2 {
			return 0, 0, fmt.Errorf("floor probe: python3 said %q", b)
		}
		line = append(line, b...)
	}
	rt = time.Since(start)
	us, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil {
		return 0, 0, fmt.Errorf("floor probe: answered %q", line)
	}
	return rt, time.Duration(us) * time.Microsecond, nil
}

func (p *floorProbe) close() {
	_ = p.conn.Close()
	_ = p.cli.Close()
}

// floorSample is one round's floor parts.
type floorSample struct{ ping, attach, command time.Duration }

// measureFloor measures the floor's parts once (the last side of the
// sandbox_exec true step). A probe that fails is reported, not failed on:
// the floor is context for a row, not a row.
func (h *Harness) measureFloor(ctx context.Context) (func(), error) {
	if h.floor == nil {
		return nil, nil
	}
	if _, err := h.dockerExecTrue(ctx); err != nil {
		return nil, err
	}
	pause(ctx)
	rt, command, err := h.floor.round()
	if err != nil {
		h.mu.Lock()
		h.floorWhy = err.Error()
		h.mu.Unlock()
		h.floor.close()
		h.floor = nil
		return nil, nil
	}
	if _, err := h.dockerExecTrue(ctx); err != nil {
		return nil, err
	}
	pause(ctx)
	start := time.Now()
	_, err = h.srv.sess.Client().CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "floor-no-such-tool"}})
	ping := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "floor-no-such-tool") {
		return nil, fmt.Errorf("a call of a tool the server does not have: got %v, want its not-found error", err)
	}
	h.mu.Lock()
	h.floorSamples = append(h.floorSamples, floorSample{ping: ping, attach: rt, command: command})
	h.mu.Unlock()
	return nil, nil
}

// floorOf summarises the samples.
func floorOf(samples []floorSample, why string) Floor {
	var ping, attach, command []time.Duration
	for _, s := range samples {
		ping, attach, command = append(ping, s.ping), append(attach, s.attach), append(command, s.command)
	}
	if len(ping) == 0 {
		if why == "" {
			why = "not measured"
		}
		return Floor{Why: why}
	}
	return Floor{N: len(ping), Ping: summarize(ping).Median, Attach: summarize(attach).Median, Command: summarize(command).Median}
}

// line is the floor beside the row's baseline median.
func (f Floor) line(baseline time.Duration) string {
	if f.N == 0 {
		if f.Why == "" {
			return "not measured"
		}
		return "not measured (" + f.Why + ")"
	}
	return fmt.Sprintf("a call of no tool %s + the engine's attach stream to a resident python3 and back %s (true in a shell it started ahead %s) = %s ms, %.3f of docker exec true (medians of %d; nothing of MCP Sandbox's in the stream)",
		ms3(f.Ping), ms3(f.Attach), ms3(f.Command), ms3(f.Total()), ratio(f.Total(), baseline), f.N)
}
