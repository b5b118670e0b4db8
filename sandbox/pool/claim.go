package pool

import "slices"

// Claim takes a ready sandbox of language made with settings key out of
// the pool, or reports false when none is ready (the caller makes a fresh
// one). A claim the pool could have served had it been larger (a burst)
// grows it by one, up to its bounds.
func (p *Pool[S, K]) Claim(language string, key K) (S, bool) {
	var none S
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return none, false
	}
	list := p.ready[language]
	i := slices.IndexFunc(list, func(it item[S, K]) bool { return it.key == key })
	pooledHere := p.keys[language] == key
	if pooledHere {
		p.busy[language] = p.now()
	}
	if i < 0 {
		// A burst: the pool could have served this one. It grows by
		// one (reconcile bounds it) and refills meanwhile.
		if pooledHere && p.extra[language] < maxSize {
			p.extra[language]++
		}
		p.mu.Unlock()
		if pooledHere {
			p.Poke()
		}
		return none, false
	}
	it := list[i]
	p.ready[language] = slices.Delete(slices.Clone(list), i, i+1)
	p.claimed[language]++
	p.mu.Unlock()
	p.Poke()
	return it.box.Sandbox, true
}
