package race

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"landslide/record"
)

// Mode selects the happens-before relation that decides races.
type Mode uint8

// Modes (thesis §3.4.4): Limited HB (-H) checks lockset disjointness of
// the conflicts DPOR's scheduling happens-before leaves unordered (and
// that C11 atomics do not order them); Pure HB (-V) uses vector clocks
// with lock release/acquire edges (and the C11 ones).
const (
	Limited Mode = iota + 1
	Pure
)

// ParseMode is the inverse of Mode.String.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "limited":
		return Limited, nil
	case "pure":
		return Pure, nil
	}
	return 0, fmt.Errorf("unknown data-race mode %q (want limited or pure)", s)
}

func (m Mode) String() string {
	switch m {
	case Limited:
		return "limited"
	case Pure:
		return "pure"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Options tune the analysis.
type Options struct {
	// TestingMutexes reports accesses inside mutex_lock, mutex_unlock,
	// mutex_init and mutex_destroy too, as unprotected ones (thesis
	// TESTING_MUTEXES): for checking a mutex implementation itself.
	TestingMutexes bool
}

// Side is one access of a candidate, as first seen.
type Side struct {
	PC, Addr uint64
	Thread   record.TID
	Write    bool
	Atomic   bool
	// Txn: the access ran inside a committed transaction (it held the
	// transactions' global lock, thesis Thm 4).
	Txn bool `msgpack:",omitempty"`
	// Tr is the index, in the branch Candidate.Branch, of the transition
	// that made this access (one of Candidate.I and Candidate.J).
	Tr int
}

// Candidate is a data-race candidate: a pair of instructions (PCs).
type Candidate struct {
	// A and B are the two accesses of the first sighting, A.PC <= B.PC;
	// with equal PCs, A is the one executed first.
	A, B Side
	// BothOrder: seen with the lower-PC access first and with the
	// higher-PC access first (with equal PCs: seen at all).
	BothOrder bool
	// FirstInterleaving: seen on the first branch analysed, i.e. a
	// deterministic candidate (the thesis's "nondeterministic" flag is the
	// negation).
	FirstInterleaving bool
	// Realloc: every sighting so far had the two accesses on different
	// allocations of the same heap memory (freed and re-malloc'ed between
	// them), a likely false positive. Cleared for good by one sighting
	// without that pattern.
	Realloc bool
	// Count is the number of branches that saw the candidate; Branch is
	// the first of them (0-based), and I < J are the indices in that
	// branch of the transitions holding its first sighting.
	Count, Branch, I, J int
	// Conflict: an atomic conflict, not a data race. Both accesses are
	// atomic (so they never race), they conflict (overlapping bytes, at
	// least one a write, different threads), and the happens-before of
	// the mode leaves them unordered, not counting the synchronisation
	// the later access makes itself when it reads what the earlier one
	// wrote (Analyzer.Conflicts). Their order decides what the program
	// does, so Quicksand makes them PPs, as it does data races.
	Conflict bool `msgpack:",omitempty"`
}

// Key identifies the candidate: its PCs, lower first.
func (c *Candidate) Key() [2]uint64 { return [2]uint64{c.A.PC, c.B.PC} }

func (c *Candidate) String() string {
	kind := "race"
	if c.Conflict {
		kind = "atomic conflict"
	}
	s := fmt.Sprintf("%s 0x%x (thread %d) / 0x%x (thread %d)", kind, c.A.PC, c.A.Thread, c.B.PC, c.B.Thread)
	if c.BothOrder {
		s += " both-order"
	} else {
		s += " single-order"
	}
	if !c.FirstInterleaving {
		s += " nondeterministic"
	}
	if c.Realloc {
		s += " free-re-malloc"
	}
	return s
}

// cand is a candidate with the state that classifies it.
type cand struct {
	Candidate
	last       int  // last branch that saw it
	loFirst    bool // seen with the lower-PC access executed first
	hiFirst    bool // seen with the higher-PC access executed first
	outsideInD bool // seen with neither access inside an init/destroy
	// Classification before the current branch (change detection).
	wasRep, wasBoth, wasRealloc bool
}

// reportable: not held back by the init/destroy rule.
func (c *cand) reportable() bool { return c.BothOrder || c.outsideInD }

// Analyzer accumulates candidates over branches. It is not safe for
// concurrent use.
type Analyzer struct {
	mode     Mode
	opt      Options
	branches int
	cands    map[[2]uint64]*cand
	// conflicts are the atomic conflicts, apart from the data races (a
	// PC pair may be in both when the same instruction was recorded as
	// atomic and as plain, which only synthetic branches do).
	conflicts map[[2]uint64]*cand
	touched   []*cand // seen in the current branch

	// Per-branch scratch, kept to avoid allocating per branch.
	tids    map[record.TID]int32
	tidOf   []record.TID // the inverse of tids
	thr     []thread
	ls      locksets
	vc      vclocks
	used    []bool  // per transition: in some pair
	span    []span  // per transition: its entries in ents
	ents    []entry // eligible accesses of used transitions
	order   []int32 // accesses of one transition in Sync order
	pairBuf [][2]int
}

// thread is one thread's replay state within a branch.
type thread struct {
	ls       int32 // current lockset
	frames   []frame
	mutexIn  int32 // depth inside mutex_{lock,unlock,init,destroy}
	initDsIn int32 // depth inside a *_init or *_destroy
}

type frame struct {
	fn  fnKind
	arg uint64
}

type span struct {
	off, end int32
	maxSize  uint64
	write    bool
}

// entry is an access prepared for the pair checks.
type entry struct {
	addr, end, pc uint64
	block, gen    uint32
	ls            int32 // lockset (Limited)
	snap          int32 // clock snapshot
	// pre: for an atomic access, the clock snapshot before its own read
	// synchronised (an acquire load's or RMW's join; the same as snap
	// for a store): atomic conflicts are decided on it.
	pre           int32
	epoch         uint32
	thr           int32 // dense thread number
	idx           int32 // index in the transition's Accesses
	write, atomic bool
	initD         bool // inside an init/destroy function
}

// New returns an analyzer for mode.
func New(mode Mode, opt Options) *Analyzer {
	if mode != Limited && mode != Pure {
		panic(fmt.Sprintf("race.New: invalid mode %d", mode))
	}
	return &Analyzer{mode: mode, opt: opt, cands: make(map[[2]uint64]*cand), conflicts: make(map[[2]uint64]*cand),
		tids: make(map[record.TID]int32)}
}

// Mode returns the analyzer's mode.
func (a *Analyzer) Mode() Mode { return a.mode }

// Branches returns how many branches were analysed.
func (a *Analyzer) Branches() int { return a.branches }

// Candidates returns the reportable candidates (those held back by the
// init/destroy rule excluded), as copies, sorted by (first branch, I, J,
// lower PC, higher PC).
func (a *Analyzer) Candidates() []*Candidate { return reportable(a.cands) }

// Conflicts returns the reportable atomic conflicts, as Candidates does
// the data races (the same init/destroy holding, order and copies).
//
// An atomic conflict is a pair of atomic accesses of different threads
// to overlapping bytes, at least one a write, that the mode's
// happens-before leaves unordered (Limited: disjoint locksets and the C11
// happens-before; Pure: the vector clocks), where the later access's
// clock is taken before its own read synchronised: a release store read
// by an acquire load orders the two only because the load ran second,
// which is exactly the order in question, so that edge is left out (with
// it, no store would conflict with the load that reads it, and a program
// of sequentially consistent atomics run one thread after another would
// have no conflict at all). They are never data races; Quicksand makes
// them PPs after every data race.
func (a *Analyzer) Conflicts() []*Candidate { return reportable(a.conflicts) }

func reportable(m map[[2]uint64]*cand) []*Candidate {
	var out []*Candidate
	for _, c := range m {
		if c.reportable() {
			cp := c.Candidate
			out = append(out, &cp)
		}
	}
	sortCandidates(out)
	return out
}

func sortCandidates(cs []*Candidate) {
	slices.SortFunc(cs, func(x, y *Candidate) int {
		return cmp.Or(cmp.Compare(x.Branch, y.Branch), cmp.Compare(x.I, y.I), cmp.Compare(x.J, y.J),
			cmp.Compare(x.A.PC, y.A.PC), cmp.Compare(x.B.PC, y.B.PC))
	})
}

// Branch analyses one completed interleaving; pairs are DPOR's
// conflicting, HB-unordered transition index pairs (i<j; a pair given the
// other way round is swapped, and pairs of one thread are ignored). It
// returns, as copies in the order of Candidates, the reportable candidates
// that are new in this branch or changed classification in it (became
// both-order, lost Realloc, or were released from init/destroy holding).
func (a *Analyzer) Branch(trs []*record.Transition, pairs [][2]int) []*Candidate {
	races, _ := a.BranchAll(trs, pairs)
	return races
}

// BranchAll is Branch, returning the atomic conflicts that are new in
// this branch or changed classification in it too (as copies, in the
// order of Conflicts).
func (a *Analyzer) BranchAll(trs []*record.Transition, pairs [][2]int) (races, conflicts []*Candidate) {
	cur := a.branches
	a.branches++
	a.touched = a.touched[:0]
	if len(pairs) == 0 {
		return nil, nil
	}
	pairs = a.normalise(trs, pairs)
	a.replay(trs)
	for _, p := range pairs {
		a.check(trs, cur, p[0], p[1])
	}
	for _, c := range a.touched {
		if !c.reportable() {
			continue
		}
		if !c.wasRep || c.BothOrder != c.wasBoth || c.Realloc != c.wasRealloc {
			cp := c.Candidate
			if c.Conflict {
				conflicts = append(conflicts, &cp)
			} else {
				races = append(races, &cp)
			}
		}
	}
	sortCandidates(races)
	sortCandidates(conflicts)
	return races, conflicts
}

// normalise orders each pair (i<j) and the list, drops pairs of one
// transition, and marks the transitions used.
func (a *Analyzer) normalise(trs []*record.Transition, pairs [][2]int) [][2]int {
	a.used = resize(a.used, len(trs))
	clear(a.used)
	sorted := true
	for k, p := range pairs {
		i, j := p[0], p[1]
		if i < 0 || j < 0 || i >= len(trs) || j >= len(trs) {
			panic(fmt.Sprintf("race: pair (%d, %d) out of range of %d transitions", i, j, len(trs)))
		}
		if i >= j || (k > 0 && cmpPair(pairs[k-1], p) >= 0) {
			sorted = false
		}
		a.used[i], a.used[j] = true, true
	}
	if sorted {
		return pairs
	}
	buf := a.pairBuf[:0]
	for _, p := range pairs {
		if p[0] > p[1] {
			p[0], p[1] = p[1], p[0]
		}
		if p[0] != p[1] {
			buf = append(buf, p)
		}
	}
	slices.SortFunc(buf, cmpPair)
	buf = slices.Compact(buf)
	a.pairBuf = buf
	return buf
}

func cmpPair(x, y [2]int) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) }

// threadOf returns the dense number of tid in this branch.
func (a *Analyzer) threadOf(tid record.TID) int32 { return a.tids[tid] }

// replay runs once over the branch: it numbers the threads, replays
// every transition's sync events in order and prepares an entry for
// each eligible access of the used transitions, with its lockset or clock.
func (a *Analyzer) replay(trs []*record.Transition) {
	clear(a.tids)
	add := func(t record.TID) {
		if _, ok := a.tids[t]; !ok {
			a.tids[t] = int32(len(a.tids))
		}
	}
	for _, tr := range trs {
		add(tr.Thread)
		for k := range tr.Sync {
			if e := &tr.Sync[k]; e.Kind == record.SyncCreate || e.Kind == record.SyncUnblock {
				add(e.Other)
			}
		}
	}
	n := len(a.tids)
	a.thr = resize(a.thr, n)
	a.tidOf = resize(a.tidOf, n)
	for tid, i := range a.tids {
		a.tidOf[i] = tid
	}
	a.ls.reset()
	for i := range a.thr {
		// Every thread holds its own thread lock for its whole life (the
		// exit-to-join edge under Limited HB: see fnJoin).
		a.thr[i] = thread{frames: a.thr[i].frames[:0], ls: a.ls.add(0, threadLock(a.tidOf[i]))}
	}
	a.vc.reset(n)
	a.span = resize(a.span, len(trs))
	a.ents = a.ents[:0]

	for ti, tr := range trs {
		t := a.threadOf(tr.Thread)
		a.vc.start(t)
		used := a.used[ti]
		sp := span{off: int32(len(a.ents))}
		order := a.syncOrder(tr)
		nsync := uint32(len(tr.Sync))
		p := 0
		for k := uint32(0); k <= nsync; k++ {
			// prev: the access just before, with no sync event between
			// (an LR before its SC).
			var prev *record.Access
			for ; p < len(tr.Accesses); p++ {
				x := int32(p)
				if order != nil {
					x = order[p]
				}
				acc := &tr.Accesses[x]
				if min(acc.Sync, nsync) != k {
					break
				}
				a.access(t, acc, prev, x, used, &sp)
				prev = acc
			}
			if k < nsync {
				a.event(t, &tr.Sync[k])
			}
		}
		sp.end = int32(len(a.ents))
		ents := a.ents[sp.off:sp.end]
		if !slices.IsSortedFunc(ents, cmpEntry) {
			slices.SortFunc(ents, cmpEntry)
		}
		a.span[ti] = sp
	}
}

func cmpEntry(x, y entry) int { return cmp.Or(cmp.Compare(x.addr, y.addr), cmp.Compare(x.idx, y.idx)) }

// syncOrder returns the transition's access indices ordered by Sync
// (stable), or nil when that is the identity: accesses are recorded in
// program order, so it normally is.
func (a *Analyzer) syncOrder(tr *record.Transition) []int32 {
	if slices.IsSortedFunc(tr.Accesses, func(x, y record.Access) int { return cmp.Compare(x.Sync, y.Sync) }) {
		return nil
	}
	o := a.order[:0]
	for i := range tr.Accesses {
		o = append(o, int32(i))
	}
	a.order = o
	slices.SortStableFunc(o, func(x, y int32) int { return cmp.Compare(tr.Accesses[x].Sync, tr.Accesses[y].Sync) })
	return o
}

// access replays access acc (index x) of thread t: its C11 effects on the
// clocks, and, if its transition is used, an entry for the pair checks.
// Accesses inside the mutex functions are the trusted implementation
// (the lock stands for them) unless Options.TestingMutexes.
func (a *Analyzer) access(t int32, acc, prev *record.Access, x int32, used bool, sp *span) {
	if a.thr[t].mutexIn > 0 && !a.opt.TestingMutexes {
		return
	}
	v := &a.vc
	size := accSize(acc)
	// pre is t's clock before the access's own read synchronises (atomic
	// conflicts are decided on it).
	pre := int32(-1)
	if used && acc.Atomic {
		pre = v.snapshot(t)
	}
	switch kindOf(acc, prev) {
	case plainRead:
	case plainWrite:
		v.plainWrite(acc.Addr, size)
	case atomicRead:
		v.atomicRead(t, acc.Addr, size, acc.Acquire)
	case atomicStore:
		if used {
			a.addEntry(t, acc, x, sp, pre)
		}
		v.store(t, acc.Addr, size, acc.Release)
		return
	case atomicRMW:
		v.atomicRead(t, acc.Addr, size, acc.Acquire)
		if used {
			a.addEntry(t, acc, x, sp, pre)
		}
		v.rmwWrite(t, acc.Addr, size, acc.Release)
		return
	}
	if used {
		a.addEntry(t, acc, x, sp, pre)
	}
}

func accSize(acc *record.Access) uint64 { return max(uint64(acc.Size), 1) }

// addEntry records access acc (index x) of thread t in its current state;
// pre is its clock before its own read synchronised (atomic accesses).
func (a *Analyzer) addEntry(t int32, acc *record.Access, x int32, sp *span, pre int32) {
	th := &a.thr[t]
	size := accSize(acc)
	e := entry{
		addr: acc.Addr, end: acc.Addr + size, pc: acc.PC,
		block: acc.Block, gen: acc.Gen,
		ls: th.ls, thr: t, idx: x,
		write: acc.Write, atomic: acc.Atomic, initD: th.initDsIn > 0,
	}
	if th.mutexIn > 0 {
		e.ls = 0 // unprotected (TESTING_MUTEXES)
	}
	e.snap = a.vc.snapshot(t)
	e.epoch = a.vc.at(e.snap, t)
	e.pre = pre
	sp.maxSize = max(sp.maxSize, size)
	sp.write = sp.write || acc.Write
	a.ents = append(a.ents, e)
}

// fnKind classifies the sync functions this package cares about.
type fnKind uint8

const (
	fnOther fnKind = iota
	fnMutexLock
	fnMutexUnlock
	fnMutexInitDestroy
	fnRwlockLock
	fnRwlockUnlock
	fnInitDestroy // cond, sem, rwlock init/destroy
	// fnJoin: thr_join(tid) returned, so everything thread tid did
	// happens-before what the joiner does next: the joiner takes tid's
	// thread lock (held by tid from its start) for good (Limited HB), and
	// its clock joins tid's clock at its exit (both modes).
	fnJoin
)

func classify(fn record.SyncFunc) fnKind {
	switch fn {
	case record.MutexLock:
		return fnMutexLock
	case record.MutexUnlock:
		return fnMutexUnlock
	case record.MutexInit, record.MutexDestroy:
		return fnMutexInitDestroy
	case record.RwlockLock:
		return fnRwlockLock
	case record.RwlockUnlock:
		return fnRwlockUnlock
	case record.CondInit, record.CondDestroy, record.SemInit, record.SemDestroy, record.RwlockInit, record.RwlockDestroy:
		return fnInitDestroy
	case record.ThrJoin:
		return fnJoin
	}
	return fnOther
}

func (f fnKind) mutexInternal() bool {
	return f == fnMutexLock || f == fnMutexUnlock || f == fnMutexInitDestroy
}

func (f fnKind) initDestroy() bool { return f == fnMutexInitDestroy || f == fnInitDestroy }

// Lock kinds: a lock is keyed by (address, kind).
const (
	kindMutex uint8 = iota + 1
	kindRwlock
	kindThread // a thread's own lock; the "address" is its TID
)

func threadLock(tid record.TID) lockKey { return lockKey{uint64(tid), kindThread} }

// txnLock is the one global lock a committed transaction holds (thesis
// Thm 4: a pair races in a transactional execution iff it races with
// each successful _xbegin an acquire of one lock and each _xend its
// release). Its address is none a guest lock can have.
var txnLock = lockKey{1<<63 - 1, kindMutex}

// exitClock is where a thread's clock is released at its exit, for its
// joiner (an address no guest lock can have: guest memory is below 2^39).
func exitClock(tid record.TID) uint64 { return 1<<63 | uint64(uint32(tid)) }

// event applies sync event e of thread t.
func (a *Analyzer) event(t int32, e *record.SyncEvent) {
	th := &a.thr[t]
	pure := a.mode == Pure
	switch e.Kind {
	case record.SyncCreate:
		a.vc.fork(t, a.threadOf(e.Other))
	case record.SyncUnblock:
		if pure {
			a.vc.wake(t, a.threadOf(e.Other))
		}
	case record.SyncExit:
		a.vc.release(t, exitClock(a.tidOf[t]))
	case record.SyncJoin: // pthread_join: as thr_join's return (fnJoin)
		th.ls = a.ls.add(th.ls, threadLock(e.Other))
		a.vc.acquire(t, exitClock(e.Other))
	case record.SyncFence:
		if th.mutexIn > 0 && !a.opt.TestingMutexes {
			return // the trusted mutex implementation's
		}
		// A seq_cst fence is both, the acquire first: what it acquires,
		// it releases too.
		if e.Arg&record.FenceAcquire != 0 {
			a.vc.acquireFence(t)
		}
		if e.Arg&record.FenceRelease != 0 {
			a.vc.releaseFence(t)
		}
	case record.SyncTxnBegin:
		th.ls = a.ls.add(th.ls, txnLock)
		if pure {
			a.vc.acquire(t, txnLock.addr)
		}
	case record.SyncTxnEnd:
		th.ls = a.ls.remove(th.ls, txnLock)
		if pure {
			a.vc.release(t, txnLock.addr)
		}
	case record.SyncTxnAbort:
		// A transaction that aborted itself began (its reads stay, under
		// the lock: kernel's htm.go); an injected abort never held it.
		if a.ls.has(th.ls, txnLock) {
			th.ls = a.ls.remove(th.ls, txnLock)
			if pure {
				a.vc.release(t, txnLock.addr)
			}
		}
	case record.SyncEnter:
		f := classify(e.Func)
		if f == fnOther {
			return
		}
		switch f {
		case fnMutexUnlock:
			th.ls = a.ls.remove(th.ls, lockKey{e.Arg, kindMutex})
			if pure {
				a.vc.release(t, e.Arg)
			}
		case fnRwlockUnlock:
			th.ls = a.ls.remove(th.ls, lockKey{e.Arg, kindRwlock})
		}
		th.frames = append(th.frames, frame{f, e.Arg})
		if f.mutexInternal() {
			th.mutexIn++
		}
		if f.initDestroy() {
			th.initDsIn++
		}
	case record.SyncReturn:
		f := classify(e.Func)
		if f == fnOther {
			return
		}
		// Pop down to the matching frame; frames above it never
		// returned (the kernel tracks a bounded call depth).
		for k := len(th.frames) - 1; k >= 0; k-- {
			if th.frames[k] != (frame{f, e.Arg}) {
				continue
			}
			for _, fr := range th.frames[k:] {
				if fr.fn.mutexInternal() {
					th.mutexIn--
				}
				if fr.fn.initDestroy() {
					th.initDsIn--
				}
			}
			th.frames = th.frames[:k]
			break
		}
		switch f {
		case fnMutexLock:
			th.ls = a.ls.add(th.ls, lockKey{e.Arg, kindMutex})
			if pure {
				a.vc.acquire(t, e.Arg)
			}
		case fnRwlockLock:
			th.ls = a.ls.add(th.ls, lockKey{e.Arg, kindRwlock})
		case fnJoin:
			joined := record.TID(int32(e.Arg))
			th.ls = a.ls.add(th.ls, threadLock(joined))
			a.vc.acquire(t, exitClock(joined))
		}
	}
}

// check tests every conflicting access pair of transitions i < j.
func (a *Analyzer) check(trs []*record.Transition, cur, i, j int) {
	if trs[i].Thread == trs[j].Thread {
		return
	}
	si, sj := a.span[i], a.span[j]
	if !si.write && !sj.write {
		return
	}
	as, bs := a.ents[si.off:si.end], a.ents[sj.off:sj.end]
	pure := a.mode == Pure
	lo := 0
	for x := range as {
		e := &as[x]
		for lo < len(bs) && bs[lo].addr+sj.maxSize <= e.addr {
			lo++
		}
		for y := lo; y < len(bs) && bs[y].addr < e.end; y++ {
			f := &bs[y]
			if f.end <= e.addr || !(e.write || f.write) {
				continue
			}
			// Two atomic accesses never race (each is indivisible, and
			// the program chose them to synchronise); an atomic against a
			// plain access can. Two atomic ones may be an atomic
			// conflict: unordered but for f's own synchronisation.
			conflict := e.atomic && f.atomic
			snap := f.snap
			if conflict {
				snap = f.pre
			}
			// e (earlier) happens-before f iff e's epoch is known to f.
			race := e.epoch > a.vc.at(snap, e.thr)
			if race && !pure {
				race = e.ls == 0 || f.ls == 0 || (e.ls != f.ls && a.ls.disjoint(e.ls, f.ls))
			}
			if race {
				a.sight(trs, cur, i, j, e, f, conflict)
			}
		}
	}
}

// sight records one racing access pair (conflict: an atomic conflict):
// e in transition i, f in j > i.
func (a *Analyzer) sight(trs []*record.Transition, cur, i, j int, e, f *entry, conflict bool) {
	key := [2]uint64{min(e.pc, f.pc), max(e.pc, f.pc)}
	m := a.cands
	if conflict {
		m = a.conflicts
	}
	c := m[key]
	if c == nil {
		c = &cand{last: -1}
		c.Branch, c.I, c.J, c.Conflict = cur, i, j, conflict
		c.FirstInterleaving = cur == 0
		c.Realloc = true
		sa := Side{PC: e.pc, Addr: e.addr, Thread: trs[i].Thread, Write: e.write, Atomic: e.atomic, Txn: a.ls.has(e.ls, txnLock), Tr: i}
		sb := Side{PC: f.pc, Addr: f.addr, Thread: trs[j].Thread, Write: f.write, Atomic: f.atomic, Txn: a.ls.has(f.ls, txnLock), Tr: j}
		if sb.PC < sa.PC {
			sa, sb = sb, sa
		}
		c.A, c.B = sa, sb
		m[key] = c
	} else if c.last != cur {
		c.wasRep, c.wasBoth, c.wasRealloc = c.reportable(), c.BothOrder, c.Realloc
	}
	if c.last != cur {
		c.last = cur
		c.Count++
		a.touched = append(a.touched, c)
	}
	switch {
	case e.pc < f.pc:
		c.loFirst = true
	case e.pc > f.pc:
		c.hiFirst = true
	default:
		c.loFirst, c.hiFirst = true, true
	}
	c.BothOrder = c.loFirst && c.hiFirst
	if !(e.block != 0 && f.block != 0 && (e.block != f.block || e.gen != f.gen)) {
		c.Realloc = false
	}
	if !e.initD && !f.initD {
		c.outsideInD = true
	}
}

// Locksets (Limited HB). A lockset is interned per branch: threads and
// accesses refer to it by id, id 0 is the empty set, and a new set is
// made only when a thread's set changes.

type lockKey struct {
	addr uint64
	kind uint8
}

func cmpLock(x, y lockKey) int {
	return cmp.Or(cmp.Compare(x.addr, y.addr), cmp.Compare(x.kind, y.kind))
}

type locksets struct {
	sets []span32  // id -> its keys in pool
	pool []lockKey // sorted keys of every set
}

type span32 struct{ off, end int32 }

func (l *locksets) reset() {
	l.sets = append(l.sets[:0], span32{})
	l.pool = l.pool[:0]
}

func (l *locksets) keys(id int32) []lockKey {
	s := l.sets[id]
	return l.pool[s.off:s.end]
}

// add returns the id of set id ∪ {k}.
func (l *locksets) add(id int32, k lockKey) int32 {
	ks := l.keys(id)
	pos, found := slices.BinarySearchFunc(ks, k, cmpLock)
	if found {
		return id
	}
	off := int32(len(l.pool))
	l.pool = append(l.pool, ks[:pos]...)
	l.pool = append(l.pool, k)
	l.pool = append(l.pool, ks[pos:]...)
	l.sets = append(l.sets, span32{off, int32(len(l.pool))})
	return int32(len(l.sets) - 1)
}

// has reports whether set id holds k.
func (l *locksets) has(id int32, k lockKey) bool {
	_, found := slices.BinarySearchFunc(l.keys(id), k, cmpLock)
	return found
}

// remove returns the id of set id \ {k}.
func (l *locksets) remove(id int32, k lockKey) int32 {
	ks := l.keys(id)
	pos, found := slices.BinarySearchFunc(ks, k, cmpLock)
	if !found {
		return id
	}
	if len(ks) == 1 {
		return 0
	}
	off := int32(len(l.pool))
	l.pool = append(l.pool, ks[:pos]...)
	l.pool = append(l.pool, ks[pos+1:]...)
	l.sets = append(l.sets, span32{off, int32(len(l.pool))})
	return int32(len(l.sets) - 1)
}

// disjoint reports whether sets x and y share no lock.
func (l *locksets) disjoint(x, y int32) bool {
	if x == 0 || y == 0 {
		return true
	}
	if x == y {
		return false
	}
	xs, ys := l.keys(x), l.keys(y)
	for len(xs) > 0 && len(ys) > 0 {
		switch c := cmpLock(xs[0], ys[0]); {
		case c == 0:
			return false
		case c < 0:
			xs = xs[1:]
		default:
			ys = ys[1:]
		}
	}
	return true
}
