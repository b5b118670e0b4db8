package sandbox

import (
	"context"
	"sync"
	"time"
)

// Usage sampling. sandbox_list answers from the latest sample the engine
// holds instead of asking Docker for stats per sandbox on every call (a
// stats round trip per sandbox made a list take up to a second under
// load). One goroutine, run by Engine.Run, samples the live sandboxes
// every usageInterval; with none it does no Docker work.
//
// Polling was chosen over Docker's stats stream: a stream makes the
// engine collect a sample every second per container (with gVisor each
// one runs the runtime's binary), while a poll every few seconds costs a
// one-shot stats call per sandbox and nothing between.

const (
	// defaultUsageInterval is how often live sandboxes are sampled.
	defaultUsageInterval = 5 * time.Second
	// usageCallTimeout bounds one sandbox's stats call.
	usageCallTimeout = 10 * time.Second
	// usageParallel bounds the concurrent stats calls of one sampling round.
	usageParallel = 4
	// listSampleTimeout bounds the stats call sandbox_list makes for a
	// sandbox that has not been sampled yet (one created since the last
	// round).
	listSampleTimeout = 5 * time.Second
)

// usageSample is the latest reading of one sandbox's usage.
type usageSample struct {
	usage Usage
	at    time.Time // zero: never sampled
	err   error     // the last attempt failed
}

// sample returns the sandbox's latest usage sample.
func (s *Sandbox) sample() usageSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

func (s *Sandbox) setSample(u usageSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = u
}

// sampleUsage keeps every live sandbox's usage sample fresh until ctx ends.
func (e *Engine) sampleUsage(ctx context.Context) {
	t := time.NewTicker(e.usageEvery)
	defer t.Stop()
	for {
		if boxes := e.Sandboxes(); len(boxes) > 0 {
			e.sampleAll(ctx, boxes)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.usageKick:
		}
	}
}

// sampleAll samples boxes, a few at a time.
func (e *Engine) sampleAll(ctx context.Context, boxes []*Sandbox) {
	sem := make(chan struct{}, usageParallel)
	var wg sync.WaitGroup
	for _, sb := range boxes {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			e.sampleOne(ctx, sb, usageCallTimeout)
		}()
	}
	wg.Wait()
}

// sampleOne takes one sample of sb and keeps it. A failed call keeps the
// previous reading, marked failed (sandbox_list shows the state as
// unknown), unless a concurrent call succeeded meanwhile or the sandbox
// is going anyway. sb.mu is not held across the call: the sample is
// read, replaced and written back, and the last writer wins.
func (e *Engine) sampleOne(ctx context.Context, sb *Sandbox, timeout time.Duration) usageSample {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	u, err := e.be.Usage(cctx, sb.ContainerID)
	if sb.isRemoving() || ctx.Err() != nil { // going, or the caller gave up
		return sb.sample()
	}
	s := sb.sample()
	if err != nil {
		if s.at.After(start) {
			return s // a concurrent call (sampler or list) did better
		}
		e.log.Debug("sample sandbox usage", "id", sb.ID, "err", err)
		s.err = err
	} else {
		s = usageSample{usage: u, at: time.Now()}
	}
	sb.setSample(s)
	return s
}

// kickUsage asks the sampler for a round now, if it is not busy.
func (e *Engine) kickUsage() {
	select {
	case e.usageKick <- struct{}{}:
	default:
	}
}
