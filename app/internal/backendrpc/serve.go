package backendrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// Opener connects to the cluster a [kubernetes] table names (the server's
// kubeconn.Open) and says where its sandboxes are.
type Opener func(ctx context.Context, k config.Kubernetes) (backend.Backend, Place, error)

// server is one Serve: the backend opened last, and the calls under way.
type server struct {
	open Opener
	log  *slog.Logger

	mu      sync.Mutex
	be      backend.Backend
	running map[uint64]context.CancelFunc

	wmu sync.Mutex
	enc *json.Encoder
}

// Serve answers the calls read from r on w until r ends (the parent went
// away or let go), then cancels the calls under way and returns once
// they have ended. Each call runs on its own goroutine.
func Serve(ctx context.Context, r io.Reader, w io.Writer, open Opener, log *slog.Logger) error {
	s := &server{open: open, log: log, running: map[uint64]context.CancelFunc{}, enc: json.NewEncoder(w)}
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: the calls under way end
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 2*maxBytes)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("%s: a line that is not a call (%w): the tray and the window start this command; it is not for people", Command, err)
		}
		if req.Method == mCancel {
			s.cancel(req.Params)
			continue
		}
		cctx, ccancel := context.WithCancel(ctx)
		s.mu.Lock()
		s.running[req.ID] = ccancel
		s.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.call(cctx, req)
			s.mu.Lock()
			delete(s.running, req.ID)
			s.mu.Unlock()
			ccancel()
			s.reply(req.ID, res, err)
		}()
	}
	return sc.Err()
}

// cancel cancels the call whose ID is params.
func (s *server) cancel(params json.RawMessage) {
	var id uint64
	if json.Unmarshal(params, &id) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.running[id]; c != nil {
		c()
	}
}

func (s *server) reply(id uint64, res any, err error) {
	out := response{ID: id}
	if err != nil {
		out.Error, out.Is = err.Error(), kindOf(err)
	} else if out.Result, err = json.Marshal(res); err != nil {
		out.Error = err.Error()
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.enc.Encode(out); err != nil {
		s.log.Warn("answer the parent", "err", err)
	}
}

// errNotOpen: a call came before the cluster was opened.
var errNotOpen = errors.New("no cluster opened: call open first")

// call runs one call.
func (s *server) call(ctx context.Context, req request) (any, error) {
	if req.Method == mOpen {
		var k config.Kubernetes
		if err := json.Unmarshal(req.Params, &k); err != nil {
			return nil, err
		}
		be, place, err := s.open(ctx, k)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.be = be
		s.mu.Unlock()
		return place, nil
	}
	s.mu.Lock()
	be := s.be
	s.mu.Unlock()
	if be == nil {
		return nil, errNotOpen
	}
	if req.Method == mExec {
		var x execCall
		if err := json.Unmarshal(req.Params, &x); err != nil {
			return nil, err
		}
		return runExec(ctx, be, x)
	}
	var t target
	if err := json.Unmarshal(req.Params, &t); err != nil && len(req.Params) > 0 {
		return nil, err
	}
	return callTarget(ctx, be, req.Method, t)
}

// callTarget runs the calls that name a container or an image.
func callTarget(ctx context.Context, be backend.Backend, method string, t target) (any, error) {
	switch method {
	case mList:
		return be.List(ctx)
	case mInspect:
		in, ok := be.(backend.Inspector)
		if !ok {
			return nil, errors.New("this backend cannot inspect a container")
		}
		return in.Inspect(ctx, t.ID)
	case mUsage:
		return be.Usage(ctx, t.ID)
	case mRemove:
		return nil, be.Remove(ctx, t.ID)
	case mEnsureImage:
		return be.EnsureImage(ctx, t.Image, t.Policy, nil)
	case mStatPath:
		return be.StatPath(ctx, t.ID, t.Path)
	case mCopyOut:
		rc, err := be.CopyFrom(ctx, t.ID, t.Path)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return readMax(rc)
	}
	return nil, fmt.Errorf("unknown call %q: the tray, the window and %s come from different versions; reinstall MCP Sandbox", method, Command)
}

// runExec runs x with its output kept (up to maxBytes each).
func runExec(ctx context.Context, be backend.Backend, x execCall) (execResult, error) {
	var out, errb bytes.Buffer
	spec := backend.ExecSpec{Cmd: x.Cmd, Env: x.Env, WorkDir: x.WorkDir, User: x.User,
		Stdout: &backend.LimitedBuffer{B: &out, N: maxBytes}, Stderr: &backend.LimitedBuffer{B: &errb, N: maxBytes}}
	if x.HasIn {
		spec.Stdin = bytes.NewReader(x.Stdin)
	}
	st, err := be.Exec(ctx, x.ID, spec)
	return execResult{Status: st, Stdout: out.Bytes(), Stderr: errb.Bytes()}, err
}

// readMax reads r whole, refusing more than maxBytes.
func readMax(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err == nil && len(b) > maxBytes {
		err = fmt.Errorf("more than %d MB to copy: copy it with the mcp-sandbox CLI or an AI client instead", maxBytes>>20)
	}
	return b, err
}
