package dpor

import (
	"slices"

	"landslide/record"
)

// Keys of the memory-conflict index: 8-byte granules of guest memory
// (addresses are below 2^39), and virtual locations for heap operations
// and the console.
const (
	keyVirtual = 1 << 62
	keyHeap    = keyVirtual | 1     // malloc/free order: they conflict with each other
	keyConsole = keyVirtual | 2     // output order
	keyBlock   = keyVirtual | 1<<61 // | block<<24 | generation: a heap block
	keyThread  = keyVirtual | 1<<60 // | tid: a thread's run state
)

func threadKey(t record.TID) uint64 { return keyThread | uint64(uint32(t)) }

func blockKey(block, gen uint32) uint64 {
	return keyBlock | uint64(block)<<24 | uint64(gen&0xffffff)
}

// keyMask is what one transition did to one key: byte masks of reads and
// writes within the granule.
type keyMask struct {
	key  uint64
	r, w uint8
}

type entry struct {
	idx  int32
	r, w uint8
}

// analysis keeps happens-before and memory conflicts along the current
// branch incrementally: each new transition is compared with the earlier
// ones when it is added (thesis §3.4.2, "computed incrementally at each
// PP"); backtracking pops what the cut transitions added.
type analysis struct {
	thread []record.TID
	before [][]record.TID // runnable threads at the node before each transition
	flips  [][]record.TID // threads whose runnability each transition changed
	prev   []int32        // previous transition of the same thread, or -1
	clocks [][]int32      // per transition: per thread slot, the last transition of that thread that happens before it (-1: none)
	full   [][]int32      // per transition: the same over every dependency (→S and memory conflicts)
	deps   [][]int32      // per transition j: every i<j it conflicts with in memory, ascending
	mem    [][]int32      // per transition j: the i<j it conflicts with in memory, not ordered by →S, ascending
	conf   [][]int32      // per transition j: the direct races among mem (see add), ascending
	dis    [][]int32      // per transition j: the i<j that disabled its thread while it could run (see add)
	keys   [][]keyMask

	slots []record.TID // slot → tid
	last  []int32      // per slot: last transition on the branch
	index map[uint64][]entry
	stamp []int32
	gen   int32
	// failing, when > 0, is a transition that failed (ended the program
	// with a bug): it is dependent with every transition of another
	// thread, because it disabled them all.
	failing int
}

func (a *analysis) slot(t record.TID) int {
	for i, u := range a.slots {
		if u == t {
			return i
		}
	}
	a.slots = append(a.slots, t)
	a.last = append(a.last, -1)
	return len(a.slots) - 1
}

// hb reports i →S j for i < j.
func (a *analysis) hb(i, j int) bool {
	c := a.clocks[j]
	s := a.slot(a.thread[i])
	return s < len(c) && c[s] >= int32(i)
}

// happensAfter reports i → k (i < k) over every dependency: the order
// of scheduling and memory conflicts.
func (a *analysis) happensAfter(i, k int) bool {
	f := a.full[k]
	s := a.slot(a.thread[i])
	return s < len(f) && f[s] >= int32(i)
}

// dependent reports whether t_k and t_n (k < n) do not commute: ordered
// by →S (same thread, enabling), a memory conflict, or a disabling.
func (a *analysis) dependent(k, n int) bool {
	if a.hb(k, n) || (n == a.failing && a.thread[k] != a.thread[n]) {
		return true
	}
	_, found := slices.BinarySearch(a.deps[n], int32(k))
	return found || slices.Contains(a.dis[n], int32(k))
}

// keysWithin reports whether every key b touches, a touches too.
func keysWithin(b, a []keyMask) bool {
	i := 0
	for _, m := range b {
		for i < len(a) && a[i].key < m.key {
			i++
		}
		if i == len(a) || a[i].key != m.key {
			return false
		}
	}
	return true
}

// keysConflict reports whether two sorted key lists touch a common byte,
// one of them writing it.
func keysConflict(a, b []keyMask) bool {
	return anyCommonKey(a, b, func(x, y keyMask) bool { return x.w&(y.r|y.w) != 0 || x.r&y.w != 0 })
}

// anyCommonKey reports whether f holds for the masks of some key that
// both sorted key lists touch.
func anyCommonKey(a, b []keyMask, f func(x, y keyMask) bool) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i].key < b[j].key:
			i++
		case a[i].key > b[j].key:
			j++
		default:
			if f(a[i], b[j]) {
				return true
			}
			i++
			j++
		}
	}
	return false
}

// overwrites reports whether transition k (k < j) wrote a byte that
// transition j touched: j may have read what k wrote.
func (a *analysis) overwrites(k, j int) bool {
	return anyCommonKey(a.keys[k], a.keys[j], func(x, y keyMask) bool { return x.w&(y.r|y.w) != 0 })
}

// add appends transition j = len so far, run from a node where before
// were runnable.
func (a *analysis) add(tr *record.Transition, before []record.TID) {
	if a.index == nil {
		a.index = map[uint64][]entry{}
	}
	j := len(a.thread)
	s := a.slot(tr.Thread)
	p := a.last[s]
	a.thread = append(a.thread, tr.Thread)
	a.before = append(a.before, before)
	a.flips = append(a.flips, nil)
	a.prev = append(a.prev, p)
	a.last[s] = int32(j)

	// Scheduling happens-before (the thesis's →S): program order, plus
	// every transition since this thread's previous one that enabled or
	// disabled it (earlier ones are already in the previous transition's
	// clock).
	c := a.newClock()
	full := a.newClock() // →S plus memory conflicts: every dependency
	if p >= 0 {
		copy(c, a.clocks[p])
		copy(full, a.full[p])
	}
	var dis, flipIn []int32
	for i := int(p) + 1; i < j; i++ {
		if contains(a.flips[i], tr.Thread) {
			join(c, a.clocks[i])
			flipIn = append(flipIn, int32(i))
			// A transition that disabled this thread while it could
			// run (a lock taken) was co-enabled with it and does not
			// happen before its previous transition: reordering them
			// matters (Flanagan and Godefroid's race "i ↛ p").
			if a.thread[i] != tr.Thread && contains(a.before[i], tr.Thread) {
				dis = append(dis, int32(i))
			}
		}
	}
	// A join (pthread_join) follows the joined thread's exit, its last
	// transition on the branch.
	for _, e := range tr.Sync {
		if e.Kind == record.SyncJoin {
			if k := a.last[a.slot(e.Other)]; k >= 0 && int(k) < j {
				join(c, a.clocks[k])
				flipIn = append(flipIn, k)
			}
		}
	}
	c[s] = int32(j)

	// Memory conflicts with earlier transitions of other threads.
	km := transitionKeys(tr)
	a.keys = append(a.keys, km)
	a.gen++
	if cap(a.stamp) < j+1 {
		a.stamp = append(a.stamp[:cap(a.stamp)], make([]int32, j+1-cap(a.stamp))...)
	}
	a.stamp = a.stamp[:j+1]
	var mem, deps []int32
	for _, m := range km {
		es := a.index[m.key]
		for _, e := range es {
			i := int(e.idx)
			if a.stamp[i] == a.gen || a.thread[i] == tr.Thread {
				continue
			}
			if m.w&(e.r|e.w) == 0 && m.r&e.w == 0 {
				continue
			}
			a.stamp[i] = a.gen
			deps = append(deps, e.idx)
			if c[a.slot(a.thread[i])] < e.idx { // not i →S j
				mem = append(mem, e.idx)
			}
		}
		a.index[m.key] = append(es, entry{idx: int32(j), r: m.r, w: m.w})
	}
	if endsOthers(tr) {
		// The program exited: every other thread's pending events are
		// cut off, so this transition is dependent
		// with every transition of another thread, and its last one on
		// the branch stands for the earlier ones (program order). DPOR
		// then reverses these races like memory ones: the end moves
		// before a thread's steps, which it cuts off instead.
		for s2, k := range a.last {
			if s2 == s || k < 0 || k >= int32(j) || a.stamp[k] == a.gen {
				continue
			}
			a.stamp[k] = a.gen
			deps = append(deps, k)
			if c[s2] < k {
				mem = append(mem, k)
			}
		}
	}
	for _, i := range deps {
		join(full, a.full[i])
	}
	for _, i := range flipIn {
		join(full, a.full[i])
	}
	full[s] = int32(j)
	a.clocks = append(a.clocks, c)
	a.full = append(a.full, full)
	slices.Sort(mem)

	// The races DPOR reverses: memory conflicts not ordered by →S (the
	// thesis's pairs) that are also direct, i.e. not ordered through
	// another dependency of this transition (its thread's previous
	// transition, another conflict, an enabling). Reversing a pair that
	// another dependency already orders is the job of that dependency's
	// own race (Flanagan and Godefroid's "last dependent transition";
	// source-set DPOR's "e ⋖ e′"). The thesis tags every pair (the dpor
	// strategy's AllPairs: mem); the result is the same state space with
	// fewer redundant branches.
	var race []int32
	for _, i := range mem {
		if !a.coveredElsewhere(i, int32(p), deps, flipIn) {
			race = append(race, i)
		}
	}
	slices.Sort(deps)
	a.deps = append(a.deps, deps)
	a.mem = append(a.mem, mem)
	a.conf = append(a.conf, race)
	a.dis = append(a.dis, dis)
}

// endsOthers reports whether a transition ended the program by an exit
// (record.SyncKill): run before another thread's steps, it cuts them off.
func endsOthers(tr *record.Transition) bool {
	for _, e := range tr.Sync {
		if e.Kind == record.SyncKill {
			return true
		}
	}
	return false
}

// coveredElsewhere reports whether transition i happens before one of the
// other direct dependencies of the transition being added.
func (a *analysis) coveredElsewhere(i, prev int32, deps, flipIn []int32) bool {
	s := a.slot(a.thread[i])
	covers := func(k int32) bool {
		if k < 0 || k == i {
			return false
		}
		f := a.full[k]
		return s < len(f) && f[s] >= i
	}
	if covers(prev) {
		return true
	}
	for _, k := range deps {
		if covers(k) {
			return true
		}
	}
	for _, k := range flipIn {
		if covers(k) {
			return true
		}
	}
	return false
}

func (a *analysis) newClock() []int32 {
	c := make([]int32, len(a.slots))
	for i := range c {
		c[i] = -1
	}
	return c
}

// join sets c to the pointwise maximum of c and d.
func join(c, d []int32) {
	for k, v := range d {
		if k < len(c) {
			c[k] = max(c[k], v)
		}
	}
}

// after records the runnable threads after the last transition.
func (a *analysis) after(runnable []record.TID) {
	j := len(a.thread) - 1
	var f []record.TID
	for _, t := range a.before[j] {
		if t != a.thread[j] && !contains(runnable, t) {
			f = append(f, t)
		}
	}
	for _, t := range runnable {
		if t != a.thread[j] && !contains(a.before[j], t) {
			f = append(f, t)
		}
	}
	a.flips[j] = f
}

// truncate cuts the branch to its first d transitions.
func (a *analysis) truncate(d int) {
	if a.failing >= d {
		a.failing = 0
	}
	for k := len(a.thread) - 1; k >= d; k-- {
		for _, m := range a.keys[k] {
			es := a.index[m.key]
			a.index[m.key] = es[:len(es)-1]
		}
		a.last[a.slot(a.thread[k])] = a.prev[k]
	}
	a.thread = a.thread[:d]
	a.before = a.before[:d]
	a.flips = a.flips[:d]
	a.prev = a.prev[:d]
	a.clocks = a.clocks[:d]
	a.full = a.full[:d]
	a.deps = a.deps[:d]
	a.mem = a.mem[:d]
	a.conf = a.conf[:d]
	a.dis = a.dis[:d]
	a.keys = a.keys[:d]
}

// pairsFrom lists the memory conflicts not ordered by →S, (i, j) with
// j >= d: the thesis's pairs, which data-race analysis checks.
func (a *analysis) pairsFrom(d int) [][2]int { return listPairs(a.mem, d) }

// racesFrom lists the races DPOR reverses, (i, j) with j >= d.
func (a *analysis) racesFrom(d int) [][2]int { return listPairs(a.conf, d) }

func listPairs(l [][]int32, d int) [][2]int {
	var out [][2]int
	for j := d; j < len(l); j++ {
		for _, i := range l[j] {
			out = append(out, [2]int{int(i), j})
		}
	}
	return out
}

// disabledFrom lists the disabling pairs (i, j) with j >= d.
func (a *analysis) disabledFrom(d int) [][2]int { return listPairs(a.dis, d) }

// transitionKeys lists what a transition touched, sorted by key.
func transitionKeys(tr *record.Transition) []keyMask {
	// One allocation of the exact size (up to the sync events' second
	// keys): an access yields a key per 8-byte group it spans, and one
	// more for a heap block.
	n := 0
	for _, acs := range [2][]record.Access{tr.Accesses, tr.Own} {
		for i := range acs {
			ac := &acs[i]
			if ac.Size > 0 {
				n += int((ac.Addr+uint64(ac.Size)-1)>>3-ac.Addr>>3) + 1
			}
			if ac.Block != 0 {
				n++
			}
		}
	}
	for _, e := range tr.Sync {
		switch e.Kind {
		case record.SyncFree:
			n += 2
		case record.SyncAlloc, record.SyncOutput, record.SyncRunState:
			n++
		}
	}
	var km []keyMask
	if n > 0 {
		km = make([]keyMask, 0, n)
	}
	put := func(key uint64, r, w uint8) { km = append(km, keyMask{key, r, w}) }
	for _, acs := range [2][]record.Access{tr.Accesses, tr.Own} {
		for i := range acs {
			ac := &acs[i]
			for addr, end := ac.Addr, ac.Addr+uint64(ac.Size); addr < end; {
				g := addr >> 3
				next := min((g+1)<<3, end)
				var mask uint8
				for b := addr; b < next; b++ {
					mask |= 1 << (b & 7)
				}
				if ac.Write {
					put(g, 0, mask)
				} else {
					put(g, mask, 0)
				}
				addr = next
			}
			// Any access of a heap block reads its life (a free writes
			// it): accesses to it conflict with each other byte by byte.
			if ac.Block != 0 {
				put(blockKey(ac.Block, ac.Gen), 1, 0)
			}
		}
	}
	for _, e := range tr.Sync {
		switch e.Kind {
		case record.SyncAlloc:
			put(keyHeap, 0, 1)
		case record.SyncFree:
			put(keyHeap, 0, 1)
			put(blockKey(e.Block, e.Gen), 0, 1)
		case record.SyncOutput:
			put(keyConsole, 0, 1)
		// A thread's run state, as the Pebbles calls read and change it.
		case record.SyncRunState:
			if e.Arg == record.RunStateRead {
				put(threadKey(e.Other), 1, 0)
			} else {
				put(threadKey(e.Other), 0, 1)
			}
		}
	}
	if len(km) < 2 {
		return km
	}
	slices.SortFunc(km, func(x, y keyMask) int {
		switch {
		case x.key < y.key:
			return -1
		case x.key > y.key:
			return 1
		}
		return 0
	})
	out := km[:1]
	for _, m := range km[1:] {
		if l := &out[len(out)-1]; l.key == m.key {
			l.r |= m.r
			l.w |= m.w
		} else {
			out = append(out, m)
		}
	}
	return out
}
