package race

// Vector clocks (Djit+): Pure HB's, and the C11 happens-before that
// Limited HB checks too. One branch knows its threads in advance,
// so every clock is a row of n uint32s in a flat slice, indexed by the
// thread's dense number in the branch; no clock is allocated on its own.

// vclocks holds the current clock of every thread, the release clock of
// every mutex, the clocks C11 atomics published, and the immutable
// snapshots that accesses refer to.
type vclocks struct {
	n    int
	cur  []uint32         // n rows: each thread's clock now
	snap []int32          // per thread: its current snapshot, -1 if stale
	rel  []uint32         // release clocks, one row per mutex seen
	relM map[uint64]int32 // mutex address -> row of rel
	pool []uint32         // snapshots, one row each

	// C11 (c11.go). pub maps a byte of memory to the clock its latest
	// write published (a row of pubs; no entry: nothing), rows being
	// immutable so that bytes share them. fence is, per thread, the row
	// of pubs its latest release fence published (-1: none); pend holds,
	// per thread, the clocks its relaxed atomic reads read since its last
	// acquire fence (pendSet: any).
	pub     map[uint64]int32
	pubs    []uint32
	fence   []int32
	pend    []uint32
	pendSet []bool
	tmp     []uint32
}

func (v *vclocks) reset(n int) {
	v.n = n
	v.cur = resize(v.cur, n*n)
	clear(v.cur)
	v.snap = v.snap[:0]
	for range n {
		v.snap = append(v.snap, -1)
	}
	v.rel = v.rel[:0]
	if v.relM == nil {
		v.relM = make(map[uint64]int32)
	}
	clear(v.relM)
	v.pool = v.pool[:0]
	if v.pub == nil {
		v.pub = make(map[uint64]int32)
	}
	clear(v.pub)
	v.pubs = v.pubs[:0]
	v.fence = resize(v.fence, n)
	for i := range v.fence {
		v.fence[i] = -1
	}
	v.pend = resize(v.pend, n*n)
	clear(v.pend)
	v.pendSet = resize(v.pendSet, n)
	clear(v.pendSet)
	v.tmp = resize(v.tmp, n)
}

func (v *vclocks) row(t int32) []uint32 { return v.cur[int(t)*v.n : (int(t)+1)*v.n] }

// tick advances thread t's own component.
func (v *vclocks) tick(t int32) {
	v.cur[int(t)*v.n+int(t)]++
	v.snap[t] = -1
}

// start gives a thread that appears without a creator its first epoch.
func (v *vclocks) start(t int32) {
	if c := &v.cur[int(t)*v.n+int(t)]; *c == 0 {
		*c = 1
		v.snap[t] = -1
	}
}

// joinInto sets dst := dst ⊔ src.
func joinInto(dst, src []uint32) {
	src = src[:len(dst)]
	for i, x := range src {
		if x > dst[i] {
			dst[i] = x
		}
	}
}

// fork: the child starts with the parent's clock, then both advance.
func (v *vclocks) fork(parent, child int32) {
	joinInto(v.row(child), v.row(parent))
	v.tick(child)
	v.tick(parent)
}

// wake: the woken thread learns everything the waker did so far.
func (v *vclocks) wake(waker, woken int32) {
	joinInto(v.row(woken), v.row(waker))
	v.snap[woken] = -1
	v.start(woken)
	v.tick(waker)
}

// release at mutex_unlock entry: the mutex keeps the releaser's clock.
func (v *vclocks) release(t int32, m uint64) {
	r, ok := v.relM[m]
	if !ok {
		r = int32(len(v.rel) / v.n)
		v.relM[m] = r
		v.rel = append(v.rel, v.row(t)...)
	} else {
		copy(v.rel[int(r)*v.n:(int(r)+1)*v.n], v.row(t))
	}
	v.tick(t)
}

// acquire at mutex_lock return: join the mutex's last release clock.
func (v *vclocks) acquire(t int32, m uint64) {
	r, ok := v.relM[m]
	if !ok {
		return
	}
	joinInto(v.row(t), v.rel[int(r)*v.n:(int(r)+1)*v.n])
	v.snap[t] = -1
}

// snapshot returns the id of an immutable copy of t's current clock,
// copying only if the clock changed since the last snapshot.
func (v *vclocks) snapshot(t int32) int32 {
	if s := v.snap[t]; s >= 0 {
		return s
	}
	s := int32(len(v.pool) / v.n)
	v.pool = append(v.pool, v.row(t)...)
	v.snap[t] = s
	return s
}

// at is component u of snapshot s.
func (v *vclocks) at(s, u int32) uint32 { return v.pool[int(s)*v.n+int(u)] }

func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
