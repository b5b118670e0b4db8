package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// The rows of the "every tool call near its floor" goals: commands through
// the sandbox's agent, sandbox_stop, and the file tools.
const (
	ExecPython = "sandbox_exec python3 -c print(1)  vs  docker exec same"
	// StopAnswered and StopGone time sandbox_stop until it answers and
	// until the container is gone, each against docker rm -f.
	StopAnswered = "sandbox_stop answered  vs  docker rm -f"
	StopGone     = "sandbox_stop, container gone  vs  docker rm -f"
	WriteFile    = "write_file 1 KB  vs  docker exec -i sh -c 'cat >f'"
	ReadFile     = "read_file 1 KB  vs  docker exec cat f"
	// Burst times each of burstN one-shot run_code calls made at once
	// (the server's [pool] size is 1, so the pool grows in the first
	// round's burst) against burstN docker run --rm at once.
	Burst = "10 concurrent one-shot run_code, pool size 1 at start  vs  10 concurrent docker run --rm"
)

// burstN is how many calls the Burst row makes at once.
const burstN = 10

// speedNames are the rows speedRound adds, in report order.
var speedNames = []string{ExecPython, StopAnswered, StopGone, WriteFile, ReadFile, Burst, Preview}

func init() {
	targets[ExecTrue] = 0.03 // issue 34
	targets[ExecPython] = 0.60
	medianTargets[StopAnswered] = 5 * time.Millisecond // issue 34
	medianTargets[StopGone] = time.Second
	medianTargets[WriteFile] = 10 * time.Millisecond
	medianTargets[ReadFile] = 10 * time.Millisecond
	medianTargets[Burst] = time.Second
}

// kilobyte is the file the file rows write and read.
var kilobyte = strings.Repeat("0123456789abcdef", 64)

// speedRound measures each of speedNames once, ours and the baseline back
// to back, in the order swap says; set-up and clean-up are not timed.
func (h *Harness) speedRound(ctx context.Context, swap bool) error {
	pairs := []struct {
		name       string
		ours, base func(context.Context) error
	}{
		{ExecPython, h.execPython, func(ctx context.Context) error { return h.docker.exec(ctx, h.baseCID) }},
		{WriteFile, h.writeKB, h.dockerWriteKB},
		{ReadFile, h.readKB, h.dockerReadKB},
	}
	for _, p := range pairs {
		for _, ours := range orderOf(swap) {
			f := p.base
			if ours {
				f = p.ours
			}
			pause(ctx)
			start := time.Now()
			if err := f(ctx); err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			h.add(p.name, ours, time.Since(start))
		}
	}
	for _, ours := range orderOf(swap) {
		var err error
		if ours {
			err = h.stopRow(ctx)
		} else {
			err = h.dockerStopRow(ctx)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", StopAnswered, err)
		}
	}
	for _, ours := range orderOf(swap) {
		if err := h.burstRow(ctx, ours); err != nil {
			return fmt.Errorf("%s: %w", Burst, err)
		}
	}
	return nil
}

// burstRow makes burstN one-shot run_code calls at once (ours) or burstN
// docker run --rm at once, and adds the time of each call. Before ours it
// waits (untimed) for a warm sandbox, like the other pool rows, and after
// either for the server's background removals to settle.
func (h *Harness) burstRow(ctx context.Context, ours bool) error {
	if ours {
		if err := h.srv.watch.waitPooled(ctx, poolWait); err != nil {
			return err
		}
	}
	errs := make([]error, burstN)
	var wg sync.WaitGroup
	for i := range burstN {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			var err error
			if ours {
				_, err = h.srv.runCode(ctx, map[string]any{"code": fmt.Sprintf("print(%d)", i)}, fmt.Sprintf("%d\n", i))
			} else {
				err = h.docker.runOnce(ctx)
			}
			if errs[i] = err; err == nil {
				h.add(Burst, ours, time.Since(start))
			}
		}()
	}
	wg.Wait()
	time.Sleep(time.Second) // one-shot sandboxes are removed in the background
	return errors.Join(errs...)
}

func orderOf(swap bool) []bool {
	if swap {
		return []bool{false, true}
	}
	return []bool{true, false}
}

func (h *Harness) add(name string, ours bool, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ours {
		h.ours[name] = append(h.ours[name], d)
	} else {
		h.base[name] = append(h.base[name], d)
	}
}

func (h *Harness) execPython(ctx context.Context) error {
	var out struct {
		Stdout string `json:"stdout"`
	}
	if err := h.srv.call(ctx, "sandbox_exec", map[string]any{"sandbox_id": h.warmID, "command": "python3 -c 'print(1)'"}, &out); err != nil {
		return err
	}
	if out.Stdout != "1\n" {
		return fmt.Errorf("stdout %q", out.Stdout)
	}
	return nil
}

func (h *Harness) writeKB(ctx context.Context) error {
	return h.srv.call(ctx, "write_file", map[string]any{"sandbox_id": h.warmID, "path": "kb.txt", "content": kilobyte}, nil)
}

func (h *Harness) readKB(ctx context.Context) error {
	var out struct {
		Content string `json:"content"`
	}
	if err := h.srv.call(ctx, "read_file", map[string]any{"sandbox_id": h.warmID, "path": "kb.txt"}, &out); err != nil {
		return err
	}
	if out.Content != kilobyte {
		return fmt.Errorf("read %d bytes back", len(out.Content))
	}
	return nil
}

func (h *Harness) dockerWriteKB(ctx context.Context) error {
	_, err := h.docker.runInput(ctx, kilobyte, "exec", "-i", h.baseCID, "sh", "-c", "cat >/tmp/kb.txt")
	return err
}

func (h *Harness) dockerReadKB(ctx context.Context) error {
	out, err := h.docker.run(ctx, "exec", h.baseCID, "cat", "/tmp/kb.txt")
	if err == nil && out != kilobyte {
		err = fmt.Errorf("read %d bytes back", len(out))
	}
	return err
}

// stopRow creates a sandbox (from the pool, untimed), then times
// sandbox_stop until it answers and until its container is gone.
func (h *Harness) stopRow(ctx context.Context) error {
	if err := h.srv.watch.waitPooled(ctx, poolWait); err != nil {
		return err
	}
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	if err := h.srv.call(ctx, "sandbox_create", map[string]any{"language": "python"}, &created); err != nil {
		return err
	}
	name := "mcp-sandbox-" + created.SandboxID
	pause(ctx)
	start := time.Now()
	if err := h.srv.call(ctx, "sandbox_stop", map[string]any{"sandbox_id": created.SandboxID}, nil); err != nil {
		return err
	}
	h.add(StopAnswered, true, time.Since(start))
	for {
		if _, err := h.docker.run(ctx, "inspect", "--format", "{{.Id}}", name); err != nil {
			break // gone
		}
		if time.Since(start) > poolWait {
			return fmt.Errorf("container %s still there after %v", name, poolWait)
		}
	}
	h.add(StopGone, true, time.Since(start))
	return nil
}

// dockerStopRow is stopRow's baseline: docker rm -f of a running
// container, which answers when it is gone.
func (h *Harness) dockerStopRow(ctx context.Context) error {
	id, err := h.docker.runDetached(ctx, randomName("mcp-sandbox-bench-baseline-"))
	if err != nil {
		return err
	}
	pause(ctx)
	start := time.Now()
	if err := h.docker.remove(ctx, id); err != nil {
		return err
	}
	d := time.Since(start)
	h.add(StopAnswered, false, d)
	h.add(StopGone, false, d)
	return nil
}

// runInput is run with input on docker's stdin.
func (d dockerCLI) runInput(ctx context.Context, input string, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, d.path, args...)
	cmd.Stdin = strings.NewReader(input)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}
