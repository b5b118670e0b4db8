package pool

import (
	"context"
	"sync"
	"time"
)

// reconcile drops ready sandboxes that no longer fit (config changed,
// paused, too old, gone from outside) and starts refills. With check it
// also asks the engine which containers still run.
func (p *Pool[S, K]) reconcile(ctx context.Context, check bool) {
	wants, sz := p.e.Wanted(ctx)
	var alive map[string]bool
	if ready := p.readyBoxes(); check && len(ready) > 0 {
		if a, err := p.e.Running(ctx, ready); err == nil {
			alive = a
		}
	}
	p.mu.Lock()
	if p.closed || ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	now := p.now()
	want := map[string]Want[S, K]{}
	for _, w := range wants {
		want[w.Language] = w
	}
	drop := p.prune(want, sz, alive, now)
	p.startFills(ctx, wants, sz, now)
	p.mu.Unlock()
	for _, it := range drop {
		p.Discard(ctx, it.box.Sandbox)
	}
}

// prune keeps the ready sandboxes that still fit and returns the others.
// Call with p.mu held.
func (p *Pool[S, K]) prune(want map[string]Want[S, K], sz Sizes, alive map[string]bool, now time.Time) []item[S, K] {
	clear(p.keys)
	clear(p.targets)
	for lang, w := range want {
		p.keys[lang] = w.Key
	}
	for lang := range p.extra {
		if _, ok := want[lang]; !ok {
			delete(p.extra, lang)
		}
	}
	var drop []item[S, K]
	for lang, list := range p.ready {
		w, ok := want[lang]
		size := p.target(lang, sz, now)
		var keep []item[S, K]
		for _, it := range list {
			stale := !ok || it.key != w.Key || len(keep) >= size ||
				now.Sub(it.box.Created) > maxAge || (alive != nil && !alive[it.box.ContainerID])
			if stale {
				drop = append(drop, it)
				continue
			}
			keep = append(keep, it)
		}
		p.ready[lang] = keep
	}
	return drop
}

// startFills starts the refills each wanted language lacks, at most
// maxFilling in flight in all. Call with p.mu held.
func (p *Pool[S, K]) startFills(ctx context.Context, wants []Want[S, K], sz Sizes, now time.Time) {
	inflight := 0
	for _, n := range p.filling {
		inflight += n
	}
	for _, w := range wants {
		lang := w.Language
		if r := p.retry[lang]; now.Before(r.next) {
			continue
		}
		p.targets[lang] = p.target(lang, sz, now)
		for need := p.targets[lang] - len(p.ready[lang]) - p.filling[lang]; need > 0 && inflight < maxFilling; need-- {
			p.filling[lang]++
			inflight++
			p.wg.Add(1)
			// A fill is not cancelled with ctx: a container creation
			// cancelled half-way can leave a container the engine made
			// but never named to us. Close stops the rest of it.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fillTimeout)
			soft, stop := context.WithCancel(fctx)
			p.nextFill++
			n := p.nextFill
			p.stops[n] = stop
			go func() {
				defer p.wg.Done()
				defer cancel()
				p.fill(fctx, soft, w)
				p.mu.Lock()
				delete(p.stops, n)
				p.mu.Unlock()
				stop()
			}()
		}
	}
}

// readyBoxes are the ready sandboxes, of every language.
func (p *Pool[S, K]) readyBoxes() []S {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []S
	for _, l := range p.ready {
		for _, it := range l {
			out = append(out, it.box.Sandbox)
		}
	}
	return out
}

// fill makes one sandbox for w and adds it to the ready list. When the
// pool has closed meanwhile, it removes what it made.
func (p *Pool[S, K]) fill(ctx, soft context.Context, w Want[S, K]) {
	lang := w.Language
	box, err := w.Make(ctx, soft)
	p.mu.Lock()
	p.filling[lang]--
	if err != nil {
		r := p.retry[lang]
		r.wait = min(max(2*r.wait, time.Second), maxBackoff)
		r.next = p.now().Add(r.wait)
		p.retry[lang] = r
		closed := p.closed
		p.mu.Unlock()
		if !closed {
			p.log.Warn("warm pool: could not make a sandbox; trying again later", "language", lang, "retry_in", r.wait, "err", err)
		}
		return
	}
	delete(p.retry, lang)
	p.made[lang]++
	if p.extra[lang] > 0 {
		p.busy[lang] = p.now()
	}
	if p.closed {
		p.mu.Unlock()
		p.Discard(ctx, box.Sandbox)
		return
	}
	p.ready[lang] = append(p.ready[lang], item[S, K]{box: box, key: w.Key})
	n := len(p.ready[lang])
	p.mu.Unlock()
	p.log.Debug("warm pool: sandbox ready", "language", lang, "id", box.ID, "ready", n)
	p.Poke()
}

// Discard removes a sandbox the pool made (one a claim could not use) in
// the background; Close waits for it.
func (p *Pool[S, K]) Discard(ctx context.Context, sb S) {
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.wg.Add(1)
	}
	p.mu.Unlock()
	if closed {
		// Close is waiting: remove it here, synchronously.
		p.e.Remove(ctx, sb)
		return
	}
	go func() {
		defer p.wg.Done()
		p.e.Remove(ctx, sb)
	}()
}

// Close stops refilling and removes every ready sandbox; it returns when
// fills and removals in flight have ended.
func (p *Pool[S, K]) Close(ctx context.Context) {
	p.mu.Lock()
	p.closed = true
	for _, stop := range p.stops {
		stop()
	}
	var all []S
	for _, l := range p.ready {
		for _, it := range l {
			all = append(all, it.box.Sandbox)
		}
	}
	p.ready = map[string][]item[S, K]{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, sb := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.e.Remove(ctx, sb)
		}()
	}
	wg.Wait()
	p.wg.Wait()
}
