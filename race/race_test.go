package race

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"landslide/record"
)

// tb builds one transition by hand, in program order: each access is
// placed after the sync events added so far.
type tb struct{ t *record.Transition }

func tr(tid record.TID) *tb { return &tb{&record.Transition{Thread: tid}} }

func (b *tb) ev(e record.SyncEvent) *tb { b.t.Sync = append(b.t.Sync, e); return b }

func (b *tb) enter(fn string, arg uint64) *tb {
	return b.ev(record.SyncEvent{Kind: record.SyncEnter, Func: mustSyncFunc(fn), Arg: arg})
}

func (b *tb) ret(fn string, arg uint64) *tb {
	return b.ev(record.SyncEvent{Kind: record.SyncReturn, Func: mustSyncFunc(fn), Arg: arg})
}

func (b *tb) lock(m uint64) *tb   { return b.enter("mutex_lock", m).ret("mutex_lock", m) }
func (b *tb) unlock(m uint64) *tb { return b.enter("mutex_unlock", m).ret("mutex_unlock", m) }
func (b *tb) create(c record.TID) *tb {
	return b.ev(record.SyncEvent{Kind: record.SyncCreate, Other: c})
}
func (b *tb) unblock(c record.TID) *tb {
	return b.ev(record.SyncEvent{Kind: record.SyncUnblock, Other: c})
}

func (b *tb) access(a record.Access) *tb {
	a.Sync = uint32(len(b.t.Sync))
	if a.Size == 0 {
		a.Size = 4
	}
	b.t.Accesses = append(b.t.Accesses, a)
	return b
}

func (b *tb) rd(addr, pc uint64) *tb { return b.access(record.Access{Addr: addr, PC: pc}) }
func (b *tb) wr(addr, pc uint64) *tb { return b.access(record.Access{Addr: addr, PC: pc, Write: true}) }

// inc is x++: a load and a store.
func (b *tb) inc(addr, pc uint64) *tb { return b.rd(addr, pc).wr(addr, pc+4) }

func trs(bs ...*tb) []*record.Transition {
	out := make([]*record.Transition, len(bs))
	for i, b := range bs {
		out[i] = b.t
	}
	return out
}

func keys(cs []*Candidate) [][2]uint64 {
	var out [][2]uint64
	for _, c := range cs {
		out = append(out, c.Key())
	}
	slices.SortFunc(out, func(x, y [2]uint64) int {
		if x[0] != y[0] {
			return cmpU(x[0], y[0])
		}
		return cmpU(x[1], y[1])
	})
	return out
}

func cmpU(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func wantKeys(t *testing.T, what string, cs []*Candidate, want ...[2]uint64) {
	t.Helper()
	got := keys(cs)
	if len(want) == 0 {
		want = nil
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: candidates %x, want %x", what, got, want)
	}
}

func find(cs []*Candidate, lo, hi uint64) *Candidate {
	for _, c := range cs {
		if c.Key() == [2]uint64{lo, hi} {
			return c
		}
	}
	return nil
}

const (
	x = 0x1000
	y = 0x1008
	m = 0x2000
)

func TestParseMode(t *testing.T) {
	for _, md := range []Mode{Limited, Pure} {
		got, err := ParseMode(md.String())
		if err != nil || got != md {
			t.Errorf("ParseMode(%q) = %v, %v", md.String(), got, err)
		}
	}
	if Limited.String() != "limited" || Pure.String() != "pure" {
		t.Errorf("names %q %q", Limited, Pure)
	}
	_, err := ParseMode("eraser")
	if err == nil || !strings.Contains(err.Error(), "limited") || !strings.Contains(err.Error(), "pure") {
		t.Errorf("ParseMode(eraser) error %v should list both modes", err)
	}
}

// Thesis Fig. 2.6(a): T1: x++; lock; unlock. T2: lock; unlock; x++.
func TestFig26a(t *testing.T) {
	// T1 first, with PPs at mutex_lock/unlock entries.
	t1First := trs(
		tr(1).create(2).inc(x, 0x100), // 0
		tr(1).lock(m),                 // 1
		tr(1).unlock(m),               // 2
		tr(2).lock(m),                 // 3
		tr(2).unlock(m).inc(x, 0x200), // 4
	)
	pairs := [][2]int{{0, 4}}
	// x++ vs x++: load/store, store/load, store/store race; load/load not.
	all := [][2]uint64{{0x100, 0x204}, {0x104, 0x200}, {0x104, 0x204}}

	lim := New(Limited, Options{})
	wantKeys(t, "limited, T1 first", lim.Branch(t1First, pairs), all...)
	pure := New(Pure, Options{})
	wantKeys(t, "pure, T1 first", pure.Branch(t1First, pairs))

	// T2's critical section and x++, then T1's x++, then T1's lock.
	t2First := trs(
		tr(1).create(2),                       // 0
		tr(2).lock(m).unlock(m).inc(x, 0x200), // 1
		tr(1).inc(x, 0x100),                   // 2
		tr(1).lock(m).unlock(m),               // 3
	)
	pure = New(Pure, Options{})
	got := pure.Branch(t2First, [][2]int{{1, 2}})
	wantKeys(t, "pure, T2 first", got, all...)
	lim = New(Limited, Options{})
	wantKeys(t, "limited, T2 first", lim.Branch(t2First, [][2]int{{1, 2}}), all...)
	// The higher PC (T2's) ran first: single-order, sides by PC.
	c := find(got, 0x104, 0x200)
	if c == nil || c.BothOrder || c.A.Thread != 1 || c.B.Thread != 2 || !c.A.Write || c.B.Write ||
		c.I != 1 || c.J != 2 || c.A.Tr != 2 || c.B.Tr != 1 || !c.FirstInterleaving || c.Count != 1 || c.Realloc {
		t.Errorf("candidate %+v", c)
	}
}

// Thesis Fig. 2.6(b): T1: x++; lock; y=true; unlock. T2: lock; tmp=y;
// unlock; x++.
func TestFig26b(t *testing.T) {
	b := trs(
		tr(1).inc(x, 0x100).lock(m).wr(y, 0x108).unlock(m), // 0
		tr(2).lock(m).rd(y, 0x200).unlock(m).inc(x, 0x204), // 1
	)
	pairs := [][2]int{{0, 1}}
	lim := New(Limited, Options{})
	// Limited reports x (a false positive by design), never y.
	wantKeys(t, "limited", lim.Branch(b, pairs), [2]uint64{0x100, 0x208}, [2]uint64{0x104, 0x204}, [2]uint64{0x104, 0x208})
	pure := New(Pure, Options{})
	wantKeys(t, "pure", pure.Branch(b, pairs))

	// Control: without the locks, y races in both modes.
	nolock := trs(
		tr(1).wr(y, 0x108),
		tr(2).rd(y, 0x200),
	)
	for _, md := range []Mode{Limited, Pure} {
		wantKeys(t, md.String()+" unlocked y", New(md, Options{}).Branch(nolock, pairs), [2]uint64{0x108, 0x200})
	}
}

// lockIn is mutex_lock's body: an atomic swap of the lock word and a store
// of the owner; unlockIn is mutex_unlock's.
func (b *tb) lockIn(mu uint64) *tb {
	return b.enter("mutex_lock", mu).
		access(record.Access{Addr: mu, PC: 0x300, Write: true, Atomic: true}).
		wr(mu+8, 0x304).
		ret("mutex_lock", mu)
}

func (b *tb) unlockIn(mu uint64) *tb {
	return b.enter("mutex_unlock", mu).
		wr(mu+8, 0x308).
		access(record.Access{Addr: mu, PC: 0x30c, Write: true, Atomic: true}).
		ret("mutex_unlock", mu)
}

func TestMutexInternals(t *testing.T) {
	b := trs(
		tr(1).lockIn(m).wr(x, 0x100).unlockIn(m),
		tr(2).lockIn(m).wr(x, 0x100).unlockIn(m),
	)
	pairs := [][2]int{{0, 1}}
	for _, md := range []Mode{Limited, Pure} {
		wantKeys(t, md.String(), New(md, Options{}).Branch(b, pairs))
	}
	// TESTING_MUTEXES: the owner field races (unprotected plain stores);
	// the lock word's atomic swaps do not race with each other; x is
	// still protected by m.
	got := New(Limited, Options{TestingMutexes: true}).Branch(b, pairs)
	wantKeys(t, "limited testing mutexes", got,
		[2]uint64{0x304, 0x304}, [2]uint64{0x304, 0x308}, [2]uint64{0x308, 0x308})
	for _, c := range got {
		// T1's lock-side PC before T2's unlock-side one, and T1's unlock
		// side before T2's lock side: both orders in one branch.
		if !c.BothOrder {
			t.Errorf("%v should be both-order", c)
		}
	}

	// Pure, TESTING_MUTEXES: T1's lock body (before its release at
	// mutex_unlock entry) happens-before everything T2 does after its
	// acquire, i.e. T2's unlock body, but not T2's lock body; T1's unlock
	// body (after its release) races with both bodies of T2. So the keys
	// are the same three plain-store ones, but the lock/unlock one is seen
	// in one order only (unlock-side PC first).
	got = New(Pure, Options{TestingMutexes: true}).Branch(b, pairs)
	wantKeys(t, "pure testing mutexes", got,
		[2]uint64{0x304, 0x304}, [2]uint64{0x304, 0x308}, [2]uint64{0x308, 0x308})
	for _, c := range got {
		if want := c.A.PC == c.B.PC; c.BothOrder != want {
			t.Errorf("pure testing mutexes: %v, want both-order %v", c, want)
		}
	}
}

// TestJoinOrders: a worker's write before it exits happens-before its
// joiner's read after thr_join returns, in both modes (issue: Limited HB
// flagged every such pair); a read before the join still races, and so
// does a third thread that joined nobody.
func TestJoinOrders(t *testing.T) {
	exit := record.SyncEvent{Kind: record.SyncExit}
	for _, md := range []Mode{Limited, Pure} {
		b := trs(
			tr(1).create(2).create(3),                                  // 0
			tr(2).wr(x, 0x200).ev(exit),                                // 1
			tr(1).enter("thr_join", 2).ret("thr_join", 2).rd(x, 0x100), // 2
			tr(3).rd(x, 0x300),                                         // 3
		)
		got := New(md, Options{}).Branch(b, [][2]int{{1, 2}, {1, 3}})
		wantKeys(t, md.String()+" after the join", got, [2]uint64{0x200, 0x300})

		b = trs(
			tr(1).create(2),            // 0
			tr(2).wr(x, 0x200),         // 1
			tr(1).rd(x, 0x100),         // 2: before the join
			tr(2).ev(exit),             // 3
			tr(1).enter("thr_join", 2), // 4
		)
		got = New(md, Options{}).Branch(b, [][2]int{{1, 2}})
		wantKeys(t, md.String()+" before the join", got, [2]uint64{0x100, 0x200})
	}
}

// TestAtomicPairs: two atomic accesses to one location never race, in
// either mode; an atomic against a plain access races as any conflict
// does (issue: amoswap/amoadd/lr/sc in atomic.c were candidates).
func TestAtomicPairs(t *testing.T) {
	amo := func(b *tb, pc uint64) *tb {
		return b.access(record.Access{Addr: x, PC: pc, Write: true, Atomic: true})
	}
	aload := func(b *tb, pc uint64) *tb { return b.access(record.Access{Addr: x, PC: pc, Atomic: true}) }
	for _, md := range []Mode{Limited, Pure} {
		// atomic RMW vs atomic RMW, and lr (atomic load) vs sc.
		b := trs(amo(aload(tr(1).create(2), 0x100), 0x104), amo(aload(tr(2), 0x200), 0x204))
		wantKeys(t, md.String()+" atomic vs atomic", New(md, Options{}).Branch(b, [][2]int{{0, 1}}))
		// atomic RMW vs a plain load and a plain store.
		b = trs(amo(tr(1).create(2), 0x100), tr(2).rd(x, 0x200).wr(x, 0x204))
		got := New(md, Options{}).Branch(b, [][2]int{{0, 1}})
		wantKeys(t, md.String()+" atomic vs plain", got, [2]uint64{0x100, 0x200}, [2]uint64{0x100, 0x204})
		if c := find(got, 0x100, 0x200); c == nil || !c.A.Atomic || c.B.Atomic {
			t.Errorf("%s: atomic flags %+v", md, c)
		}
	}
}

// TestAtomicConflicts: the atomic pairs above are never data races but
// are atomic conflicts, in both modes, when nothing but the later
// access's own read orders them. Ticket drawing with a load and a store
// (thread 1 whole, then thread 2): thread 1's store of next, read by
// thread 2's acquire load, is a conflict (that load synchronises with it
// only because it ran second); thread 1's load against thread 2's store
// is not (thread 2's load acquired thread 1's store, after thread 1's
// load); nor is anything a common lock orders. Relaxed, every pair of
// the two threads conflicts.
func TestAtomicConflicts(t *testing.T) {
	ld := func(b *tb, pc uint64) *tb {
		return b.access(record.Access{Addr: x, PC: pc, Atomic: true, Acquire: true})
	}
	st := func(b *tb, pc uint64) *tb {
		return b.access(record.Access{Addr: x, PC: pc, Write: true, Atomic: true, Release: true})
	}
	for _, md := range []Mode{Limited, Pure} {
		b := trs(tr(1).create(2), st(ld(tr(1), 0x100), 0x104), st(ld(tr(2), 0x100), 0x104))
		a := New(md, Options{})
		races, confl := a.BranchAll(b, [][2]int{{1, 2}})
		wantKeys(t, md.String()+" ticket: races", races)
		wantKeys(t, md.String()+" ticket: conflicts", confl, [2]uint64{0x100, 0x104})
		if c := confl[0]; !c.Conflict || c.A.PC != 0x100 || c.B.PC != 0x104 || c.A.Write || !c.B.Write || c.BothOrder {
			t.Errorf("%s: %+v", md, c)
		}
		if got := a.Candidates(); len(got) != 0 {
			t.Errorf("%s: data-race candidates %v", md, got)
		}
		// Under a common lock (Limited: locksets; Pure: the mutex's edge).
		b = trs(tr(1).create(2), st(ld(tr(1).lock(m), 0x100), 0x104).unlock(m), st(ld(tr(2).lock(m), 0x100), 0x104).unlock(m))
		_, confl = New(md, Options{}).BranchAll(b, [][2]int{{1, 2}})
		wantKeys(t, md.String()+" locked", confl)
		// Relaxed accesses: the store before the load too.
		b = trs(tr(1).create(2), tr(1).access(record.Access{Addr: x, PC: 0x100, Atomic: true}).access(record.Access{Addr: x, PC: 0x104, Write: true, Atomic: true}),
			tr(2).access(record.Access{Addr: x, PC: 0x100, Atomic: true}).access(record.Access{Addr: x, PC: 0x104, Write: true, Atomic: true}))
		_, confl = New(md, Options{}).BranchAll(b, [][2]int{{1, 2}})
		wantKeys(t, md.String()+" relaxed", confl, [2]uint64{0x100, 0x104}, [2]uint64{0x104, 0x104})
		if c := find(confl, 0x104, 0x104); c == nil || !c.BothOrder {
			t.Errorf("%s: one instruction against itself is both-order: %+v", md, c)
		}
	}
}

// Nesting: rwlock_lock calls mutex_lock on its internal mutex; only the
// accesses inside the inner mutex_lock are mutex internals.
func TestNesting(t *testing.T) {
	const rw, in = 0x3000, 0x3010
	b := trs(
		tr(1).enter("rwlock_lock", rw).lockIn(in).wr(rw, 0x400).unlockIn(in).ret("rwlock_lock", rw),
		tr(2).wr(rw, 0x500).wr(in, 0x504),
	)
	// 0x400 (inside rwlock_lock, under the internal mutex) races with
	// T2's unprotected 0x500; the internal mutex's words (0x300..0x30c)
	// are not reported against T2's 0x504.
	wantKeys(t, "limited", New(Limited, Options{}).Branch(b, [][2]int{{0, 1}}), [2]uint64{0x400, 0x500})

	// A frame that never returns (the kernel's bounded call depth) is
	// dropped when an outer frame returns.
	b = trs(
		tr(1).enter("mutex_lock", m).enter("mutex_unlock", 0x9999).ret("mutex_lock", m).wr(x, 0x100),
		tr(2).wr(x, 0x200),
	)
	wantKeys(t, "unmatched frame", New(Limited, Options{}).Branch(b, [][2]int{{0, 1}}), [2]uint64{0x100, 0x200})
}

func TestAcrossBranches(t *testing.T) {
	const z, cv = 0x5000, 0x6000
	heap := func(pc uint64, gen uint32, block uint32) record.Access {
		return record.Access{Addr: z, PC: pc, Write: true, Block: block, Gen: gen}
	}
	// Branch 0: T1's accesses first; z on different allocations; cv
	// written by T1 inside cond_init.
	b0 := trs(
		tr(1).create(2).wr(x, 0x100).access(heap(0x120, 1, 5)).enter("cond_init", cv).wr(cv, 0x130).ret("cond_init", cv),
		tr(2).wr(x, 0x200).access(heap(0x220, 2, 6)).wr(cv, 0x230),
	)
	// Branch 1: T2 first; z on one allocation; y seen for the first time.
	b1 := trs(
		tr(1).create(2),
		tr(2).wr(x, 0x200).access(heap(0x220, 1, 5)).wr(cv, 0x230).wr(y, 0x210),
		tr(1).wr(x, 0x100).access(heap(0x120, 1, 5)).enter("cond_init", cv).wr(cv, 0x130).ret("cond_init", cv).wr(y, 0x110),
	)
	a := New(Pure, Options{})
	got := a.Branch(b0, [][2]int{{0, 1}})
	// cv is held back: single-order with an access inside cond_init.
	wantKeys(t, "branch 0", got, [2]uint64{0x100, 0x200}, [2]uint64{0x120, 0x220})
	wantKeys(t, "after 0", a.Candidates(), [2]uint64{0x100, 0x200}, [2]uint64{0x120, 0x220})
	if c := find(got, 0x120, 0x220); c == nil || !c.Realloc || c.BothOrder || !c.FirstInterleaving {
		t.Errorf("z after branch 0: %+v", c)
	}
	if c := find(got, 0x100, 0x200); c == nil || c.BothOrder || !c.FirstInterleaving || c.Branch != 0 || c.I != 0 || c.J != 1 {
		t.Errorf("x after branch 0: %+v", c)
	}
	got[0].Count = 99 // copies: must not reach the analyzer

	got = a.Branch(b1, [][2]int{{1, 2}})
	// x and z both-order now, z lost Realloc, cv released, y new.
	wantKeys(t, "branch 1", got, [2]uint64{0x100, 0x200}, [2]uint64{0x110, 0x210}, [2]uint64{0x120, 0x220}, [2]uint64{0x130, 0x230})
	all := a.Candidates()
	wantKeys(t, "after 1", all, [2]uint64{0x100, 0x200}, [2]uint64{0x110, 0x210}, [2]uint64{0x120, 0x220}, [2]uint64{0x130, 0x230})
	for _, k := range [][2]uint64{{0x100, 0x200}, {0x120, 0x220}, {0x130, 0x230}} {
		c := find(all, k[0], k[1])
		if !c.BothOrder || !c.FirstInterleaving || c.Realloc || c.Count != 2 || c.Branch != 0 || c.I != 0 || c.J != 1 {
			t.Errorf("%x after branch 1: %+v", k, c)
		}
	}
	if c := find(all, 0x110, 0x210); c.BothOrder || c.FirstInterleaving || c.Count != 1 || c.Branch != 1 || c.I != 1 || c.J != 2 ||
		c.A.Thread != 1 || c.B.Thread != 2 || c.A.Tr != 2 || c.B.Tr != 1 {
		t.Errorf("y: %+v", c)
	}
	// Sorted by first branch, then I, J, PCs.
	wantOrder := [][2]uint64{{0x100, 0x200}, {0x120, 0x220}, {0x130, 0x230}, {0x110, 0x210}}
	for i, c := range all {
		if c.Key() != wantOrder[i] {
			t.Errorf("Candidates()[%d] = %x, want %x", i, c.Key(), wantOrder[i])
		}
	}

	// Branch 2 = branch 0 again: nothing changes classification; z keeps
	// Realloc cleared even though this sighting has the pattern.
	if got := a.Branch(b0, [][2]int{{0, 1}}); len(got) != 0 {
		t.Errorf("branch 2 changes: %v", got)
	}
	if c := find(a.Candidates(), 0x120, 0x220); c.Realloc || c.Count != 3 {
		t.Errorf("z after branch 2: %+v", c)
	}
	if a.Branches() != 3 {
		t.Errorf("Branches() = %d", a.Branches())
	}
}

// Init/destroy holding ends when the candidate is seen outside
// init/destroy, even single-order.
func TestInitDestroyOutside(t *testing.T) {
	const mu = 0x7000
	in := trs(
		tr(1).enter("sem_init", mu).wr(mu, 0x100).ret("sem_init", mu),
		tr(2).wr(mu, 0x200),
	)
	out := trs(
		tr(1).wr(mu, 0x100),
		tr(2).wr(mu, 0x200),
	)
	a := New(Limited, Options{})
	wantKeys(t, "inside", a.Branch(in, [][2]int{{0, 1}}))
	wantKeys(t, "inside, all", a.Candidates())
	got := a.Branch(out, [][2]int{{0, 1}})
	wantKeys(t, "outside", got, [2]uint64{0x100, 0x200})
	if c := got[0]; c.BothOrder || c.Count != 2 || c.Branch != 0 || !c.FirstInterleaving {
		t.Errorf("%+v", c)
	}
	// mutex_destroy also holds back, with TESTING_MUTEXES (otherwise its
	// accesses are not reported at all).
	d := trs(
		tr(1).enter("mutex_destroy", mu).wr(mu, 0x100).ret("mutex_destroy", mu),
		tr(2).wr(mu, 0x200),
	)
	wantKeys(t, "mutex_destroy", New(Limited, Options{TestingMutexes: true}).Branch(d, [][2]int{{0, 1}}))
	a = New(Limited, Options{TestingMutexes: true})
	a.Branch(d, [][2]int{{0, 1}})
	rev := trs(tr(2).wr(mu, 0x200), tr(1).enter("mutex_destroy", mu).wr(mu, 0x100).ret("mutex_destroy", mu))
	wantKeys(t, "mutex_destroy both orders", a.Branch(rev, [][2]int{{0, 1}}), [2]uint64{0x100, 0x200})
}

// Locks carry from one transition of a thread to its next, and are keyed
// by kind.
func TestLockCarryAndKind(t *testing.T) {
	build := func(lockFn, unlockFn string) []*record.Transition {
		return trs(
			tr(1).lock(m),                                          // 0
			tr(1).wr(x, 0x100).unlock(m),                           // 1
			tr(2).enter(lockFn, m).ret(lockFn, m),                  // 2
			tr(2).wr(x, 0x200).enter(unlockFn, m).ret(unlockFn, m), // 3
		)
	}
	pairs := [][2]int{{1, 3}}
	wantKeys(t, "mutex/mutex", New(Limited, Options{}).Branch(build("mutex_lock", "mutex_unlock"), pairs))
	wantKeys(t, "mutex/rwlock", New(Limited, Options{}).Branch(build("rwlock_lock", "rwlock_unlock"), pairs), [2]uint64{0x100, 0x200})
	wantKeys(t, "mutex/sem", New(Limited, Options{}).Branch(build("sem_wait", "sem_signal"), pairs), [2]uint64{0x100, 0x200})
	// Released in transition 1: an access after the unlock is unprotected.
	b := trs(
		tr(1).lock(m),
		tr(1).unlock(m).wr(x, 0x100),
		tr(2).lock(m),
		tr(2).wr(x, 0x200),
	)
	wantKeys(t, "after unlock", New(Limited, Options{}).Branch(b, pairs), [2]uint64{0x100, 0x200})
	// rwlock on both sides: a common lock.
	rw := trs(
		tr(1).enter("rwlock_lock", m).ret("rwlock_lock", m),
		tr(1).wr(x, 0x100).enter("rwlock_unlock", m).ret("rwlock_unlock", m),
		tr(2).enter("rwlock_lock", m).ret("rwlock_lock", m),
		tr(2).wr(x, 0x200),
	)
	wantKeys(t, "rwlock/rwlock", New(Limited, Options{}).Branch(rw, pairs))
}

// Pure HB edges other than locks: fork and make_runnable.
func TestPureForkWake(t *testing.T) {
	// T1 writes x, then creates T2, which writes x: ordered by fork.
	b := trs(tr(1).wr(x, 0x100).create(2), tr(2).wr(x, 0x200))
	wantKeys(t, "fork", New(Pure, Options{}).Branch(b, [][2]int{{0, 1}}))
	// Written after the create: not ordered.
	b = trs(tr(1).create(2).wr(x, 0x100), tr(2).wr(x, 0x200))
	wantKeys(t, "after fork", New(Pure, Options{}).Branch(b, [][2]int{{0, 1}}), [2]uint64{0x100, 0x200})
	// Wake: T2 blocks, T1 writes x and makes T2 runnable, T2 writes x.
	b = trs(
		tr(1).create(2),
		tr(2).ev(record.SyncEvent{Kind: record.SyncBlock}),
		tr(1).wr(x, 0x100).unblock(2).wr(y, 0x104),
		tr(2).wr(x, 0x200).wr(y, 0x204),
	)
	wantKeys(t, "wake", New(Pure, Options{}).Branch(b, [][2]int{{2, 3}}), [2]uint64{0x104, 0x204})
}

// Partial overlaps and pair normalisation.
func TestOverlapAndPairs(t *testing.T) {
	b := trs(
		tr(1).access(record.Access{Addr: x, Size: 8, PC: 0x100, Write: true}).
			access(record.Access{Addr: x + 16, Size: 1, PC: 0x104}),
		tr(2).access(record.Access{Addr: x + 7, Size: 1, PC: 0x200}). // overlaps 0x100's last byte
										access(record.Access{Addr: x + 8, Size: 8, PC: 0x204, Write: true}).  // adjacent to 0x100: no
										access(record.Access{Addr: x + 15, Size: 2, PC: 0x208, Write: true}). // overlaps 0x104
										access(record.Access{Addr: x - 4, Size: 4, PC: 0x20c, Write: true}).  // adjacent below
										access(record.Access{Addr: x + 16, Size: 1, PC: 0x210}),              // read/read
	)
	want := [][2]uint64{{0x100, 0x200}, {0x104, 0x208}}
	wantKeys(t, "overlap", New(Limited, Options{}).Branch(b, [][2]int{{0, 1}}), want...)
	// Swapped, duplicated and self pairs: same result, I < J.
	got := New(Limited, Options{}).Branch(b, [][2]int{{1, 0}, {0, 1}, {1, 1}})
	wantKeys(t, "pairs", got, want...)
	for _, c := range got {
		if c.I != 0 || c.J != 1 {
			t.Errorf("%+v", c)
		}
	}
	// Same thread: ignored.
	same := trs(tr(1).wr(x, 0x100), tr(1).wr(x, 0x200))
	wantKeys(t, "same thread", New(Limited, Options{}).Branch(same, [][2]int{{0, 1}}))
}

// --- Random executions, checked against a naive reference ---

type genOpt struct {
	// noSync: no lock operations, no fences and no acquire or release
	// atomics (relaxed atomics and RMWs still), so that nothing but the
	// creation of every thread orders anything.
	noSync bool
}

// syncLocs are where genBranch's atomics go: words that its 4- and
// 8-byte atomics overlap in part, and that its plain accesses (anywhere
// in 0x1000..0x101f) overwrite now and then.
var syncLocs = []uint64{0x1000, 0x1004, 0x1008, 0x1010}

// lockInAs is mutex_lock's body in one of three styles: a relaxed swap
// (style 0, lockIn), an amoswap.aq (1), or a relaxed CAS (LR and SC) and
// an acquire fence (2). unlockInAs is mutex_unlock's: a relaxed store (0,
// unlockIn), a release store (1), or a release fence and a relaxed store
// (2). The atomics count for C11 only with TestingMutexes.
func (b *tb) lockInAs(mu uint64, style int) *tb {
	b.enter("mutex_lock", mu)
	if style == 2 {
		b.access(record.Access{Addr: mu, PC: 0x2fc, Atomic: true})
	}
	b.access(record.Access{Addr: mu, PC: 0x300, Write: true, Atomic: true, Acquire: style == 1})
	if style == 2 {
		b.ev(record.SyncEvent{Kind: record.SyncFence, Arg: record.FenceAcquire})
	}
	return b.wr(mu+8, 0x304).ret("mutex_lock", mu)
}

func (b *tb) unlockInAs(mu uint64, style int) *tb {
	b.enter("mutex_unlock", mu).wr(mu+8, 0x308)
	if style == 2 {
		b.ev(record.SyncEvent{Kind: record.SyncFence, Arg: record.FenceRelease})
	}
	return b.access(record.Access{Addr: mu, PC: 0x30c, Write: true, Atomic: true, Release: style == 1}).ret("mutex_unlock", mu)
}

// genBranch simulates a consistent execution of 2..4 threads with mutexes
// (mutual exclusion respected), thread creation, C11 fences and shared
// accesses of mixed sizes: plain ones, and atomic loads, stores, AMOs and
// LR/SC pairs (a lone LR: a failed CAS), relaxed, acquire and/or release.
// Then it picks a random subset of cross-thread pairs.
func genBranch(r *rand.Rand, o genOpt) ([]*record.Transition, [][2]int) {
	nthr := 2 + r.IntN(3)
	mutexes := []uint64{0x9000, 0x9010}
	owner := map[uint64]record.TID{}
	held := map[record.TID][]uint64{}
	var out []*record.Transition
	first := tr(1)
	for c := 2; c <= nthr; c++ {
		first.create(record.TID(c))
	}
	out = append(out, first.t)
	steps := 2 + r.IntN(10)
	ordered := func() bool { return !o.noSync && r.IntN(2) == 0 }
	for range steps {
		tid := record.TID(1 + r.IntN(nthr))
		b := tr(tid)
		for range 1 + r.IntN(6) {
			switch op := r.IntN(15); {
			case op < 2 && !o.noSync:
				mu := mutexes[r.IntN(len(mutexes))]
				if _, taken := owner[mu]; !taken {
					owner[mu] = tid
					held[tid] = append(held[tid], mu)
					b.lockInAs(mu, r.IntN(3))
				}
			case op < 4 && !o.noSync:
				if h := held[tid]; len(h) > 0 {
					k := r.IntN(len(h))
					mu := h[k]
					held[tid] = slices.Delete(h, k, k+1)
					delete(owner, mu)
					b.unlockInAs(mu, r.IntN(3))
				}
			case op < 5 && !o.noSync:
				b.ev(record.SyncEvent{Kind: record.SyncFence, Arg: uint64(1 + r.IntN(3))})
			case op >= 5 && op < 10:
				a := record.Access{Addr: syncLocs[r.IntN(len(syncLocs))], Size: 4, Atomic: true, PC: 0x180 + 8*uint64(r.IntN(8))}
				if r.IntN(4) == 0 {
					a.Size = 8
				}
				switch r.IntN(4) {
				case 0: // load
					a.Acquire = ordered()
				case 1: // store
					a.Write, a.Release = true, ordered()
				case 2: // AMO
					a.Write, a.Acquire, a.Release = true, ordered(), ordered()
				default: // LR, and its SC unless the CAS failed
					a.Acquire = ordered()
					b.access(a)
					if r.IntN(4) == 0 {
						continue
					}
					a.PC += 4
					a.Write, a.Acquire, a.Release = true, false, ordered()
				}
				b.access(a)
			default:
				sizes := []uint8{1, 2, 4, 8}
				a := record.Access{
					Addr:   0x1000 + uint64(r.IntN(24)),
					Size:   sizes[r.IntN(4)],
					Write:  r.IntN(2) == 0,
					Atomic: r.IntN(5) == 0,
					PC:     0x100 + 4*uint64(r.IntN(10)),
				}
				if a.Addr < 0x1008 {
					a.Block, a.Gen = 1, 1+uint32(r.IntN(2))
				}
				b.access(a)
			}
		}
		// A set: drop duplicates.
		var acc []record.Access
		for _, a := range b.t.Accesses {
			if !slices.Contains(acc, a) {
				acc = append(acc, a)
			}
		}
		b.t.Accesses = acc
		out = append(out, b.t)
	}
	var pairs [][2]int
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[i].Thread != out[j].Thread && r.IntN(3) > 0 {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	// Given out of order: the analyzer must not care.
	r.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	return out, pairs
}

// refAccess is an access with its naively replayed state: its lockset
// and its index among the branch's events (refHB).
type refAccess struct {
	record.Access
	tid      record.TID
	internal bool
	locks    map[uint64]bool
	ev       int
}

// refEvent is one event of a branch: an access or a sync event.
type refEvent struct {
	tid      record.TID
	acc      *record.Access
	sync     *record.SyncEvent
	internal bool // inside mutex_lock or mutex_unlock (their return included)
	rmw      bool // an atomic write that also reads (see refReplay)
}

// refReplay lists the branch's events in execution order (each
// transition's accesses and sync events by Access.Sync) and recomputes
// every access's lockset with maps, following the thesis's rules directly
// (only the sync genBranch uses: create, mutex_lock and mutex_unlock
// without nesting, fences).
func refReplay(trs []*record.Transition) ([][]refAccess, []refEvent) {
	locks := map[record.TID]map[uint64]bool{}
	inMutex := map[record.TID]int{}
	var evs []refEvent
	out := make([][]refAccess, len(trs))
	for ti, tr := range trs {
		t := tr.Thread
		if locks[t] == nil {
			locks[t] = map[uint64]bool{}
		}
		for k := 0; k <= len(tr.Sync); k++ {
			var prev *record.Access // the access just before, in this group
			for xi := range tr.Accesses {
				a := &tr.Accesses[xi]
				if min(int(a.Sync), len(tr.Sync)) != k {
					continue
				}
				// An atomic write reads too if it is an acquire (a store
				// never is) or the SC of the LR just before it.
				rmw := a.Atomic && a.Write && (a.Acquire ||
					prev != nil && prev.Atomic && !prev.Write && prev.Addr == a.Addr && prev.Size == a.Size)
				prev = a
				evs = append(evs, refEvent{tid: t, acc: a, internal: inMutex[t] > 0, rmw: rmw})
				ls := map[uint64]bool{}
				for l := range locks[t] {
					ls[l] = true
				}
				out[ti] = append(out[ti], refAccess{*a, t, inMutex[t] > 0, ls, len(evs) - 1})
			}
			if k == len(tr.Sync) {
				break
			}
			e := &tr.Sync[k]
			evs = append(evs, refEvent{tid: t, sync: e, internal: inMutex[t] > 0})
			switch {
			case e.Kind == record.SyncEnter && e.Func == record.MutexLock:
				inMutex[t]++
			case e.Kind == record.SyncReturn && e.Func == record.MutexLock:
				inMutex[t]--
				locks[t][e.Arg] = true
			case e.Kind == record.SyncEnter && e.Func == record.MutexUnlock:
				inMutex[t]++
				delete(locks[t], e.Arg)
			case e.Kind == record.SyncReturn && e.Func == record.MutexUnlock:
				inMutex[t]--
			}
		}
	}
	return out, evs
}

// refHB is happens-before over evs, built from the definitions as a
// graph and closed transitively (quadratic in the events): program order,
// thread creation, with mutexes the last mutex_unlock entry before a
// mutex_lock return on the same mutex, and with c11 the C11
// synchronises-with of a sequentially consistent execution:
//
//   - an atomic read, or the read of an RMW, reads for each of its bytes
//     the latest write of that byte before it;
//   - the writes whose release sequence holds the write W read are W and,
//     while the write in hand is an RMW, the write of the byte before it;
//   - each of those, A, if atomic, synchronises from A itself when it is
//     a release, and from every release fence of A's thread before A;
//   - to the read if it is an acquire, and to every acquire fence of the
//     reader's thread after the read.
//
// Events inside the mutex functions are left out of the C11 part unless
// testingMutexes. hb(i, j) reports whether event i happens-before j.
//
// pre(i, j) is whether i happens-before j without j's own
// synchronisation: through an edge into j that is not a C11
// synchronises-with edge to j itself (j an acquire read), the order
// atomic conflicts are decided on.
func refHB(evs []refEvent, mutexes, c11, testingMutexes bool) (hb, pre func(i, j int) bool) {
	n := len(evs)
	edges := make([][]int, n) // edges[j]: the i with an edge i -> j
	own := make([][]int, n)   // own[j]: the same but the C11 ones
	addC11 := func(i, j int) {
		if i >= j {
			panic(fmt.Sprintf("refHB: edge %d -> %d goes back", i, j))
		}
		edges[j] = append(edges[j], i)
	}
	add := func(i, j int) {
		addC11(i, j)
		own[j] = append(own[j], i)
	}
	last := map[record.TID]int{}
	created := map[record.TID]int{}
	unlocked := map[uint64]int{}
	for j, e := range evs {
		if p, ok := last[e.tid]; ok {
			add(p, j)
		} else if c, ok := created[e.tid]; ok {
			add(c, j)
		}
		last[e.tid] = j
		if e.sync == nil {
			continue
		}
		switch s := e.sync; {
		case s.Kind == record.SyncCreate:
			created[s.Other] = j
		case mutexes && s.Kind == record.SyncEnter && s.Func == record.MutexUnlock:
			unlocked[s.Arg] = j
		case mutexes && s.Kind == record.SyncReturn && s.Func == record.MutexLock:
			if u, ok := unlocked[s.Arg]; ok {
				add(u, j)
			}
		}
	}
	if c11 {
		out := func(e refEvent) bool { return e.internal && !testingMutexes }
		fence := func(e refEvent, bit uint64) bool {
			return e.sync != nil && !out(e) && e.sync.Kind == record.SyncFence && e.sync.Arg&bit != 0
		}
		size := func(a *record.Access) uint64 { return max(uint64(a.Size), 1) }
		for j, e := range evs {
			if e.acc == nil || out(e) || !e.acc.Atomic || (e.acc.Write && !e.rmw) {
				continue
			}
			var to []int
			if e.acc.Acquire {
				to = append(to, j)
			}
			for g := j + 1; g < n; g++ {
				if evs[g].tid == e.tid && fence(evs[g], record.FenceAcquire) {
					to = append(to, g)
				}
			}
			for b := e.acc.Addr; b < e.acc.Addr+size(e.acc); b++ {
				for w := j - 1; w >= 0; w-- {
					we := evs[w]
					if we.acc == nil || out(we) || !we.acc.Write || b < we.acc.Addr || b >= we.acc.Addr+size(we.acc) {
						continue
					}
					if we.acc.Atomic {
						var from []int
						if we.acc.Release {
							from = append(from, w)
						}
						for f := range w {
							if evs[f].tid == we.tid && fence(evs[f], record.FenceRelease) {
								from = append(from, f)
							}
						}
						for _, f := range from {
							for _, g := range to {
								addC11(f, g)
							}
						}
					}
					if !we.rmw {
						break
					}
				}
			}
		}
	}
	anc := make([][]bool, n) // anc[j][i]: i happens-before j
	for j := range n {
		anc[j] = make([]bool, n)
		for _, i := range edges[j] {
			anc[j][i] = true
			for k, in := range anc[i] {
				anc[j][k] = anc[j][k] || in
			}
		}
	}
	pre = func(i, j int) bool {
		for _, k := range own[j] {
			if k == i || anc[k][i] {
				return true
			}
		}
		return false
	}
	return func(i, j int) bool { return anc[j][i] }, pre
}

type refCand struct {
	lo, hi, both, realloc bool
	count, branch, i, j   int
	last                  int
}

// refAnalyze is the naive analysis of one branch: every access pair of
// every given transition pair, with the race rule applied directly. It
// returns how many conflicting pairs that would race without the C11
// edges they order.
//
// Atomic conflicts go to confl: pairs of atomic accesses with the same
// conditions (threads, overlap, a write, the mutex functions left out,
// disjoint locksets under Limited) that happens-before does not order
// before the later access's own synchronisation (refHB's pre).
func refAnalyze(mode Mode, opt Options, cur int, trs []*record.Transition, pairs [][2]int, cands, confl map[[2]uint64]*refCand) (byC11 int) {
	acc, evs := refReplay(trs)
	hb, pre := refHB(evs, mode == Pure, true, opt.TestingMutexes)
	hbNoC11, _ := refHB(evs, mode == Pure, false, opt.TestingMutexes)
	ps := slices.Clone(pairs)
	sort.Slice(ps, func(a, b int) bool {
		if ps[a][0] != ps[b][0] {
			return ps[a][0] < ps[b][0]
		}
		return ps[a][1] < ps[b][1]
	})
	for _, p := range ps {
		for _, a := range acc[p[0]] {
			for _, b := range acc[p[1]] {
				if a.tid == b.tid {
					continue
				}
				if (a.internal || b.internal) && !opt.TestingMutexes {
					continue
				}
				overlap := a.Addr < b.Addr+uint64(b.Size) && b.Addr < a.Addr+uint64(a.Size)
				if !overlap || !(a.Write || b.Write) {
					continue
				}
				conflict := a.Atomic && b.Atomic
				race := true
				if mode == Limited && !a.internal && !b.internal {
					for l := range a.locks {
						if b.locks[l] {
							race = false
						}
					}
				}
				if !conflict && race && !hbNoC11(a.ev, b.ev) && hb(a.ev, b.ev) {
					byC11++
				}
				if !race || (!conflict && hb(a.ev, b.ev)) || (conflict && pre(a.ev, b.ev)) {
					continue
				}
				k := [2]uint64{min(a.PC, b.PC), max(a.PC, b.PC)}
				m := cands
				if conflict {
					m = confl
				}
				c := m[k]
				if c == nil {
					c = &refCand{realloc: true, branch: cur, i: p[0], j: p[1], last: -1}
					m[k] = c
				}
				if c.last != cur {
					c.last = cur
					c.count++
				}
				if a.PC <= b.PC {
					c.lo = true
				}
				if a.PC >= b.PC {
					c.hi = true
				}
				c.both = c.lo && c.hi
				if !(a.Block != 0 && b.Block != 0 && a.Gen != b.Gen) {
					c.realloc = false
				}
			}
		}
	}
	return byC11
}

func TestAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	byC11, conflicts := map[Mode]int{}, map[Mode]int{}
	for iter := range 400 {
		mode := []Mode{Limited, Pure}[iter%2]
		opt := Options{TestingMutexes: iter%4 >= 2}
		a := New(mode, opt)
		ref, refConfl := map[[2]uint64]*refCand{}, map[[2]uint64]*refCand{}
		for br := range 4 {
			b, pairs := genBranch(r, genOpt{})
			a.Branch(b, pairs)
			byC11[mode] += refAnalyze(mode, opt, br, b, pairs, ref, refConfl)
		}
		for _, kind := range []struct {
			what string
			got  []*Candidate
			ref  map[[2]uint64]*refCand
		}{{"candidates", a.Candidates(), ref}, {"atomic conflicts", a.Conflicts(), refConfl}} {
			got := kind.got
			if len(got) != len(kind.ref) {
				t.Fatalf("iter %d (%v %+v): %d %s, reference %d: %x", iter, mode, opt, len(got), kind.what, len(kind.ref), keys(got))
			}
			for _, c := range got {
				w := kind.ref[c.Key()]
				if w == nil {
					t.Fatalf("iter %d: unexpected %v", iter, c)
				}
				if c.BothOrder != w.both || c.Realloc != w.realloc || c.Count != w.count || c.Branch != w.branch ||
					c.I != w.i || c.J != w.j || c.FirstInterleaving != (w.branch == 0) || c.Conflict != (kind.what != "candidates") {
					t.Fatalf("iter %d (%v %+v): %+v, reference %+v", iter, mode, opt, c, *w)
				}
			}
		}
		conflicts[mode] += len(a.Conflicts())
	}
	// Not vacuous: the C11 edges decided many access pairs in each mode,
	// and there were atomic conflicts to compare.
	for _, md := range []Mode{Limited, Pure} {
		t.Logf("%v: %d atomic conflicts", md, conflicts[md])
		if conflicts[md] < 200 {
			t.Errorf("%v: only %d atomic conflicts", md, conflicts[md])
		}
		t.Logf("%v: %d access pairs ordered by C11 edges only", md, byC11[md])
		if byC11[md] < 200 {
			t.Errorf("%v: only %d access pairs ordered by C11 edges only", md, byC11[md])
		}
	}
}

// Limited ⊇ Pure: if the locksets at a and b (a earlier) share a mutex,
// A released it after a and B acquired it before b, in that order (mutual
// exclusion), so the release/acquire edge orders a before b and Pure does
// not report the pair; and Limited's happens-before (C11 and thread
// creation) is part of Pure's. Hence every Pure sighting is a Limited
// sighting.
func TestLimitedCoversPure(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 300 {
		opt := Options{TestingMutexes: iter%2 == 1}
		lim, pure := New(Limited, opt), New(Pure, opt)
		for range 4 {
			b, pairs := genBranch(r, genOpt{})
			lim.Branch(b, pairs)
			pure.Branch(b, pairs)
		}
		lc := lim.Candidates()
		for _, p := range pure.Candidates() {
			l := find(lc, p.A.PC, p.B.PC)
			if l == nil {
				t.Fatalf("iter %d: pure %v not in limited %x", iter, p, keys(lc))
			}
			if l.Count < p.Count || (p.BothOrder && !l.BothOrder) || l.Branch > p.Branch {
				t.Fatalf("iter %d: pure %+v, limited %+v", iter, p, l)
			}
		}
	}
}

// Without locks (the only sync is the creation of every thread before any
// access), nothing orders accesses of different threads: both modes report
// exactly the conflicting PC pairs of the given transition pairs, found
// here by brute force.
func TestNoSyncModesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 200 {
		lim, pure := New(Limited, Options{}), New(Pure, Options{})
		var brute [][2]uint64
		for range 3 {
			b, pairs := genBranch(r, genOpt{noSync: true})
			lim.Branch(b, pairs)
			pure.Branch(b, pairs)
			for _, p := range pairs {
				for _, a := range b[p[0]].Accesses {
					for _, c := range b[p[1]].Accesses {
						if a.Addr < c.Addr+uint64(c.Size) && c.Addr < a.Addr+uint64(a.Size) && (a.Write || c.Write) && !(a.Atomic && c.Atomic) {
							k := [2]uint64{min(a.PC, c.PC), max(a.PC, c.PC)}
							if !slices.Contains(brute, k) {
								brute = append(brute, k)
							}
						}
					}
				}
			}
		}
		slices.SortFunc(brute, func(x, y [2]uint64) int {
			if x[0] != y[0] {
				return cmpU(x[0], y[0])
			}
			return cmpU(x[1], y[1])
		})
		if l, p := keys(lim.Candidates()), keys(pure.Candidates()); !slices.Equal(l, brute) || !slices.Equal(p, brute) {
			t.Fatalf("iter %d: limited %x pure %x brute %x", iter, l, p, brute)
		}
	}
}

// Determinism: the same branches give the same candidates, in the same
// order, on a fresh analyzer.
func TestDeterministic(t *testing.T) {
	var runs [2]string
	for k := range runs {
		r := rand.New(rand.NewPCG(7, 8))
		a := New(Limited, Options{})
		var s string
		for range 20 {
			b, pairs := genBranch(r, genOpt{})
			for _, c := range a.Branch(b, pairs) {
				s += fmt.Sprintf("%+v\n", *c)
			}
		}
		for _, c := range a.Candidates() {
			s += fmt.Sprintf("%+v\n", *c)
		}
		runs[k] = s
	}
	if runs[0] != runs[1] {
		t.Error("two runs differ")
	}
}

func BenchmarkBranch(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	// A few hundred transitions of tens of accesses.
	var trsList []*record.Transition
	for len(trsList) < 300 {
		t, _ := genBranch(r, genOpt{})
		trsList = append(trsList, t...)
	}
	for _, t := range trsList {
		for k := range 20 {
			t.Accesses = append(t.Accesses, record.Access{Addr: 0x4000 + uint64(8*k), Size: 8, Write: k%3 == 0, PC: 0x700 + uint64(4*k), Sync: uint32(len(t.Sync))})
		}
	}
	var pairs [][2]int
	for i := range trsList {
		for j := i + 1; j < len(trsList) && j < i+20; j++ {
			if trsList[i].Thread != trsList[j].Thread {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	for _, md := range []Mode{Limited, Pure} {
		b.Run(md.String(), func(b *testing.B) {
			a := New(md, Options{})
			b.ReportAllocs()
			for b.Loop() {
				a.Branch(trsList, pairs)
			}
			b.ReportMetric(float64(len(pairs)), "pairs")
		})
	}
}

func mustSyncFunc(name string) record.SyncFunc {
	fn, ok := record.SyncFuncNamed(name)
	if !ok || fn == record.NoSyncFunc {
		panic("not a sync function: " + name)
	}
	return fn
}

// TestTxnAbortReleases: a transaction that aborts itself began (its
// reads stay in the transition, kernel's htm.go), so its abort releases
// the transactions' global lock: its reads are inside it, what follows
// is not. An injected abort never held it and releases nothing (in Pure
// mode a release would order the thread's earlier accesses before the
// next transaction).
func TestTxnAbortReleases(t *testing.T) {
	const y = x + 0x40
	begin := record.SyncEvent{Kind: record.SyncTxnBegin}
	end := record.SyncEvent{Kind: record.SyncTxnEnd}
	abort := record.SyncEvent{Kind: record.SyncTxnAbort, Arg: record.XabortRetry}
	b := trs(
		tr(1).create(2).ev(begin).rd(x, 0x100).ev(abort).wr(y, 0x104), // 0: read x, abort itself, write y
		tr(2).ev(begin).wr(x, 0x200).wr(y, 0x204).ev(end),             // 1
	)
	got := New(Limited, Options{}).Branch(b, [][2]int{{0, 1}})
	wantKeys(t, "limited, after a self-abort", got, [2]uint64{0x104, 0x204})

	for _, md := range []Mode{Limited, Pure} {
		b = trs(
			tr(1).create(2).wr(y, 0x104).ev(abort), // 0: an injected abort
			tr(2).ev(begin).wr(y, 0x204).ev(end),   // 1
		)
		got = New(md, Options{}).Branch(b, [][2]int{{0, 1}})
		wantKeys(t, md.String()+", an injected abort", got, [2]uint64{0x104, 0x204})
	}
}
