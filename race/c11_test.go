package race

import (
	"testing"

	"landslide/record"
)

// C11 atomics as RISC-V compiles them and the record describes them
// (emu/cpu's markOrdered, the aq and rl bits): relaxed ones are atomic
// with neither order, acquire (or seq_cst) loads have Acquire, release
// (or seq_cst) stores Release.

const flag = 0x1100

func (b *tb) ldRlx(addr, pc uint64) *tb {
	return b.access(record.Access{Addr: addr, PC: pc, Atomic: true})
}

func (b *tb) ldAcq(addr, pc uint64) *tb {
	return b.access(record.Access{Addr: addr, PC: pc, Atomic: true, Acquire: true})
}

func (b *tb) stRlx(addr, pc uint64) *tb {
	return b.access(record.Access{Addr: addr, PC: pc, Write: true, Atomic: true})
}

func (b *tb) stRel(addr, pc uint64) *tb {
	return b.access(record.Access{Addr: addr, PC: pc, Write: true, Atomic: true, Release: true})
}

// amo is an AMO with the given aq and rl bits: recorded as a write.
func (b *tb) amo(addr, pc uint64, aq, rl bool) *tb {
	return b.access(record.Access{Addr: addr, PC: pc, Write: true, Atomic: true, Acquire: aq, Release: rl})
}

// cas is a successful compare-and-swap: an LR (aq as given) at pc and
// its SC (rl as given) at pc+4.
func (b *tb) cas(addr, pc uint64, aq, rl bool) *tb {
	return b.access(record.Access{Addr: addr, PC: pc, Atomic: true, Acquire: aq}).
		access(record.Access{Addr: addr, PC: pc + 4, Write: true, Atomic: true, Release: rl})
}

func (b *tb) fence(arg uint64) *tb { return b.ev(record.SyncEvent{Kind: record.SyncFence, Arg: arg}) }

const (
	acqFence = record.FenceAcquire
	relFence = record.FenceRelease
	scFence  = record.FenceAcquire | record.FenceRelease
)

// allPairs is every pair of transitions of different threads (a superset
// of what DPOR passes: the analysis decides on its own).
func allPairs(b []*record.Transition) [][2]int {
	var ps [][2]int
	for i := range b {
		for j := i + 1; j < len(b); j++ {
			if b[i].Thread != b[j].Thread {
				ps = append(ps, [2]int{i, j})
			}
		}
	}
	return ps
}

// bothModes checks that each mode reports exactly want.
func bothModes(t *testing.T, what string, b []*record.Transition, want ...[2]uint64) {
	t.Helper()
	for _, md := range []Mode{Limited, Pure} {
		wantKeys(t, md.String()+": "+what, New(md, Options{}).Branch(b, allPairs(b)), want...)
	}
}

type op func(*tb, uint64) *tb

// messagePassing: T1 writes x (0x100) and sets the flag (at 0x104, as
// publish does it); T2 reads the flag (0x200, as consume does it), then
// x (0x204). Every access is its own transition (every access a PP).
func messagePassing(publish, consume op) []*record.Transition {
	return trs(
		tr(1).create(2),       // 0
		tr(1).wr(x, 0x100),    // 1
		publish(tr(1), 0x104), // 2
		consume(tr(2), 0x200), // 3
		tr(2).rd(x, 0x204),    // 4
	)
}

func TestMessagePassing(t *testing.T) {
	rel := func(b *tb, pc uint64) *tb { return b.stRel(flag, pc) }
	rlx := func(b *tb, pc uint64) *tb { return b.stRlx(flag, pc) }
	acq := func(b *tb, pc uint64) *tb { return b.ldAcq(flag, pc) }
	rlxLd := func(b *tb, pc uint64) *tb { return b.ldRlx(flag, pc) }
	data := [2]uint64{0x100, 0x204}

	// The release store synchronises with the acquire load that reads it.
	bothModes(t, "release/acquire", messagePassing(rel, acq))
	// A relaxed side orders nothing: the data races.
	bothModes(t, "relaxed store", messagePassing(rlx, acq), data)
	bothModes(t, "relaxed load", messagePassing(rel, rlxLd), data)
	bothModes(t, "both relaxed", messagePassing(rlx, rlxLd), data)
	// A plain flag races itself, and orders nothing.
	plainSt := func(b *tb, pc uint64) *tb { return b.wr(flag, pc) }
	plainLd := func(b *tb, pc uint64) *tb { return b.rd(flag, pc) }
	bothModes(t, "plain store", messagePassing(plainSt, acq), data, [2]uint64{0x104, 0x200})
	bothModes(t, "plain load", messagePassing(rel, plainLd), data, [2]uint64{0x104, 0x200})
	// An RMW publishes like a store: amoswap.rl, amoadd.aqrl, an SC.rl.
	bothModes(t, "amoswap.rl", messagePassing(func(b *tb, pc uint64) *tb { return b.amo(flag, pc, false, true) }, acq))
	bothModes(t, "amoadd.aqrl / amoor.aq", messagePassing(
		func(b *tb, pc uint64) *tb { return b.amo(flag, pc, true, true) },
		func(b *tb, pc uint64) *tb { return b.amo(flag, pc, true, false) }))
	bothModes(t, "cas release / lr.aq", messagePassing(
		func(b *tb, pc uint64) *tb { return b.cas(flag, pc, false, true) },
		func(b *tb, pc uint64) *tb {
			return b.access(record.Access{Addr: flag, PC: pc, Atomic: true, Acquire: true})
		}))

	// The acquire load runs before the release store: it reads the
	// initial value and synchronises with nothing.
	early := trs(
		tr(1).create(2),          // 0
		tr(1).wr(x, 0x100),       // 1
		tr(2).ldAcq(flag, 0x200), // 2
		tr(1).stRel(flag, 0x104), // 3
		tr(2).rd(x, 0x204),       // 4
	)
	bothModes(t, "acquire before the release", early, data)

	// One transition each (PPs at sync functions only): the same.
	bothModes(t, "release/acquire, one transition each", trs(
		tr(1).create(2).wr(x, 0x100).stRel(flag, 0x104),
		tr(2).ldAcq(flag, 0x200).rd(x, 0x204)))
	// The write after the release store is not published by it.
	bothModes(t, "a write after the release", trs(
		tr(1).create(2).stRel(flag, 0x104).wr(x, 0x100),
		tr(2).ldAcq(flag, 0x200).rd(x, 0x204)), data)
}

func TestFenceMessagePassing(t *testing.T) {
	data := [2]uint64{0x100, 0x204}
	fenced := func(pub, con op) []*record.Transition { return messagePassing(pub, con) }
	relThenRlx := func(b *tb, pc uint64) *tb { return b.fence(relFence).stRlx(flag, pc) }
	rlxThenAcq := func(b *tb, pc uint64) *tb { return b.ldRlx(flag, pc).fence(acqFence) }
	bothModes(t, "release fence, acquire fence", fenced(relThenRlx, rlxThenAcq))
	bothModes(t, "release fence, acquire load", fenced(relThenRlx, func(b *tb, pc uint64) *tb { return b.ldAcq(flag, pc) }))
	bothModes(t, "release store, acquire fence", fenced(func(b *tb, pc uint64) *tb { return b.stRel(flag, pc) }, rlxThenAcq))
	bothModes(t, "seq_cst fences", fenced(
		func(b *tb, pc uint64) *tb { return b.fence(scFence).stRlx(flag, pc) },
		func(b *tb, pc uint64) *tb { return b.ldRlx(flag, pc).fence(scFence) }))
	// The fences in their own transitions (a fence is no PP), the
	// acquire fence after an unrelated access.
	bothModes(t, "fences apart", trs(
		tr(1).create(2),                    // 0
		tr(1).wr(x, 0x100).fence(relFence), // 1
		tr(1).stRlx(flag, 0x104),           // 2
		tr(2).ldRlx(flag, 0x200),           // 3
		tr(2).rd(y, 0x208).fence(acqFence), // 4
		tr(2).rd(x, 0x204),                 // 5
	))

	// Fences on the wrong side order nothing.
	bothModes(t, "acquire fence before the load", fenced(relThenRlx,
		func(b *tb, pc uint64) *tb { return b.fence(acqFence).ldRlx(flag, pc) }), data)
	bothModes(t, "release fence after the store", fenced(
		func(b *tb, pc uint64) *tb { return b.stRlx(flag, pc).fence(relFence) }, rlxThenAcq), data)
	bothModes(t, "acquire fence as the release", fenced(
		func(b *tb, pc uint64) *tb { return b.fence(acqFence).stRlx(flag, pc) }, rlxThenAcq), data)
	bothModes(t, "release fence as the acquire", fenced(relThenRlx,
		func(b *tb, pc uint64) *tb { return b.ldRlx(flag, pc).fence(relFence) }), data)
	// A plain store after a release fence publishes nothing.
	bothModes(t, "plain store after the fence", fenced(
		func(b *tb, pc uint64) *tb { return b.fence(relFence).wr(flag, pc) }, rlxThenAcq), data, [2]uint64{0x104, 0x200})
	// An acquire fence takes only what the thread's loads read: T2's load
	// ran before T1's store.
	bothModes(t, "the load read the old value", trs(
		tr(1).create(2),                    // 0
		tr(1).wr(x, 0x100).fence(relFence), // 1
		tr(2).ldRlx(flag, 0x200),           // 2
		tr(1).stRlx(flag, 0x104),           // 3
		tr(2).fence(acqFence).rd(x, 0x204), // 4
	), data)
}

// releaseSequence: T1 writes x (0x100) and release-stores the flag
// (0x104); T2 does what middle says to the flag (PCs from 0x300); T3
// acquire-loads the flag (0x400), then reads x (0x404).
func releaseSequence(middle func(*tb) *tb) []*record.Transition {
	return trs(
		tr(1).create(2).create(3), // 0
		tr(1).wr(x, 0x100),        // 1
		tr(1).stRel(flag, 0x104),  // 2
		middle(tr(2)),             // 3
		tr(3).ldAcq(flag, 0x400),  // 4
		tr(3).rd(x, 0x404),        // 5
	)
}

func TestReleaseSequence(t *testing.T) {
	data := [2]uint64{0x100, 0x404}
	// RMWs continue T1's release sequence: T3 reads T2's write and still
	// synchronises with T1.
	bothModes(t, "relaxed CAS", releaseSequence(func(b *tb) *tb { return b.cas(flag, 0x300, false, false) }))
	bothModes(t, "amoadd.aq", releaseSequence(func(b *tb) *tb { return b.amo(flag, 0x300, true, false) }))
	bothModes(t, "two CASes", releaseSequence(func(b *tb) *tb {
		return b.cas(flag, 0x300, false, false).cas(flag, 0x310, false, false)
	}))
	// A failed CAS (the LR alone) writes nothing: T3 reads T1's store.
	bothModes(t, "failed CAS", releaseSequence(func(b *tb) *tb { return b.ldRlx(flag, 0x300) }))

	// A store that is not an RMW ends it: T3 reads a store that publishes
	// nothing.
	bothModes(t, "relaxed store", releaseSequence(func(b *tb) *tb { return b.stRlx(flag, 0x300) }), data)
	bothModes(t, "relaxed store after a CAS", releaseSequence(func(b *tb) *tb {
		return b.cas(flag, 0x300, false, false).stRlx(flag, 0x310)
	}), data)
	bothModes(t, "plain store", releaseSequence(func(b *tb) *tb { return b.wr(flag, 0x300) }),
		data, [2]uint64{0x104, 0x300}, [2]uint64{0x300, 0x400})
	// A relaxed AMO without .aq is recorded exactly as a relaxed store
	// (Write and Atomic, no order), so it counts as one and ends the
	// sequence: a false candidate, never a missed one.
	bothModes(t, "amoadd (no aq, no rl)", releaseSequence(func(b *tb) *tb { return b.amo(flag, 0x300, false, false) }), data)
	// A load and a store of T2 with an unrelated access between are no
	// LR/SC pair: the store ends the sequence.
	bothModes(t, "load, store", releaseSequence(func(b *tb) *tb {
		return b.ldRlx(flag, 0x300).rd(y, 0x308).stRlx(flag, 0x304)
	}), data)
	// The sequence is T1's own: a relaxed store by T1 after its release
	// store ends it too (C++20).
	bothModes(t, "relaxed store by the releaser", trs(
		tr(1).create(2).create(3), // 0
		tr(1).wr(x, 0x100),        // 1
		tr(1).stRel(flag, 0x104),  // 2
		tr(1).stRlx(flag, 0x108),  // 3
		tr(3).ldAcq(flag, 0x400),  // 4
		tr(3).rd(x, 0x404),        // 5
	), data)
	// An acquire-release RMW by T2 (amoadd.aqrl) publishes T2's clock and
	// keeps T1's.
	withRMW := func(rmw func(*tb) *tb) []*record.Transition {
		return trs(
			tr(1).create(2).create(3),       // 0
			tr(1).wr(x, 0x100),              // 1
			tr(1).stRel(flag, 0x104),        // 2
			tr(2).wr(y, 0x200),              // 3
			rmw(tr(2)),                      // 4
			tr(3).ldAcq(flag, 0x400),        // 5
			tr(3).rd(x, 0x404).rd(y, 0x408), // 6
		)
	}
	bothModes(t, "acq_rel RMW", withRMW(func(b *tb) *tb { return b.amo(flag, 0x300, true, true) }))
	bothModes(t, "release CAS", withRMW(func(b *tb) *tb { return b.cas(flag, 0x300, false, true) }))
	// amoswap.rl alone is recorded exactly as a release store: it
	// publishes T2's clock only.
	bothModes(t, "amoswap.rl", withRMW(func(b *tb) *tb { return b.amo(flag, 0x300, false, true) }), data)
}

// TestAmoswapLock: a spinlock taken with amoswap.w.aq (C11
// atomic_exchange_explicit(..., memory_order_acquire)) and released with
// a release store protects a plain counter, in both modes, with a failed
// attempt of T2 in the middle; with a relaxed unlock the counter races.
func TestAmoswapLock(t *testing.T) {
	const l, c = 0x1200, 0x1300
	run := func(lock, unlock func(*tb) *tb) []*record.Transition {
		return trs(
			tr(1).create(2),    // 0
			lock(tr(1)),        // 1: T1 takes it
			tr(1).rd(c, 0x104), // 2
			lock(tr(2)),        // 3: T2 swaps 1 for 1 and spins
			tr(1).wr(c, 0x108), // 4
			unlock(tr(1)),      // 5
			lock(tr(2)),        // 6: T2 takes it
			tr(2).rd(c, 0x104), // 7
			tr(2).wr(c, 0x108), // 8
			unlock(tr(2)),      // 9
		)
	}
	swapAcq := func(b *tb) *tb { return b.amo(l, 0x100, true, false) }
	storeRel := func(b *tb) *tb { return b.stRel(l, 0x10c) }
	bothModes(t, "amoswap.aq / release store", run(swapAcq, storeRel))
	// A test-and-test-and-set lock: a relaxed load before each swap.
	bothModes(t, "test and test-and-set", run(func(b *tb) *tb { return b.ldRlx(l, 0xfc).amo(l, 0x100, true, false) }, storeRel))
	// The counter's accesses: T1's load and store against T2's.
	counter := [][2]uint64{{0x104, 0x108}, {0x108, 0x108}}
	bothModes(t, "relaxed unlock", run(swapAcq, func(b *tb) *tb { return b.stRlx(l, 0x10c) }), counter...)
	bothModes(t, "relaxed swap", run(func(b *tb) *tb { return b.amo(l, 0x100, false, false) }, storeRel), counter...)
}

// TestMutexInternalAtomics: the atomics inside mutex_lock and
// mutex_unlock are the trusted implementation the lock stands for, so
// Limited HB still reports the race behind an unrelated lock (thesis Fig.
// 2.6a) when the mutex is built on amoswap.aq and a release store; with
// TestingMutexes they order as any atomics do.
func TestMutexInternalAtomics(t *testing.T) {
	b := trs(
		tr(1).create(2).inc(x, 0x100),        // 0
		tr(1).lockInAs(m, 1),                 // 1
		tr(1).unlockInAs(m, 1),               // 2
		tr(2).lockInAs(m, 1),                 // 3
		tr(2).unlockInAs(m, 1).inc(x, 0x200), // 4
	)
	all := [][2]uint64{{0x100, 0x204}, {0x104, 0x200}, {0x104, 0x204}}
	wantKeys(t, "limited", New(Limited, Options{}).Branch(b, allPairs(b)), all...)
	wantKeys(t, "pure", New(Pure, Options{}).Branch(b, allPairs(b)))
	// Testing the mutex: its amoswap.aq reads the release store of the
	// previous unlock, which orders the owner field's stores (0x304,
	// 0x308) and x.
	for _, md := range []Mode{Limited, Pure} {
		wantKeys(t, md.String()+" testing mutexes", New(md, Options{TestingMutexes: true}).Branch(b, allPairs(b)))
	}
	// The same with a relaxed CAS and an acquire fence, a release fence
	// and a relaxed store (style 2): the same.
	b = trs(
		tr(1).create(2).inc(x, 0x100),
		tr(1).lockInAs(m, 2),
		tr(1).unlockInAs(m, 2),
		tr(2).lockInAs(m, 2),
		tr(2).unlockInAs(m, 2).inc(x, 0x200),
	)
	wantKeys(t, "limited, fences", New(Limited, Options{}).Branch(b, allPairs(b)), all...)
	for _, md := range []Mode{Limited, Pure} {
		wantKeys(t, md.String()+" testing mutexes, fences", New(md, Options{TestingMutexes: true}).Branch(b, allPairs(b)))
	}
	// The release fence inside mutex_unlock does not make T1's relaxed
	// store after it a release, unless the mutex is under test.
	b = trs(
		tr(1).create(2).lockInAs(m, 2).wr(x, 0x100), // 0
		tr(1).unlockInAs(m, 2).stRlx(flag, 0x104),   // 1
		tr(2).ldAcq(flag, 0x200).rd(x, 0x204),       // 2
	)
	bothModes(t, "fence in mutex_unlock", b, [2]uint64{0x100, 0x204})
	for _, md := range []Mode{Limited, Pure} {
		wantKeys(t, md.String()+" testing mutexes, fence in mutex_unlock", New(md, Options{TestingMutexes: true}).Branch(b, allPairs(b)))
	}
}

// TestLimitedForkOrders: thread creation orders under Limited HB too.
func TestLimitedForkOrders(t *testing.T) {
	bothModes(t, "before the create", trs(tr(1).wr(x, 0x100).create(2), tr(2).wr(x, 0x200)))
	bothModes(t, "after the create", trs(tr(1).create(2).wr(x, 0x100), tr(2).wr(x, 0x200)), [2]uint64{0x100, 0x200})
}

// TestMixedSizes: an acquire load synchronises with the release stores
// of every byte it reads, and an 8-byte store republishes all 8.
func TestMixedSizes(t *testing.T) {
	wide := func(a record.Access) record.Access { a.Size = 8; return a }
	// T1 release-stores the low word, T2 relaxed-stores the high word; T3
	// reads all 8 bytes with acquire: T1's x is ordered, T2's y is not.
	b := trs(
		tr(1).create(2).create(3),               // 0
		tr(1).wr(x, 0x100).stRel(flag, 0x104),   // 1
		tr(2).wr(y, 0x200).stRlx(flag+4, 0x204), // 2
		tr(3).access(wide(record.Access{Addr: flag, PC: 0x300, Atomic: true, Acquire: true})).rd(x, 0x304).rd(y, 0x308), // 3
	)
	bothModes(t, "two words", b, [2]uint64{0x200, 0x308})
	// A relaxed 8-byte store over T1's word ends its sequence.
	b = trs(
		tr(1).create(2).create(3),             // 0
		tr(1).wr(x, 0x100).stRel(flag, 0x104), // 1
		tr(2).access(wide(record.Access{Addr: flag, PC: 0x204, Write: true, Atomic: true})), // 2
		tr(3).ldAcq(flag, 0x300).rd(x, 0x304),                                               // 3
	)
	bothModes(t, "wide store", b, [2]uint64{0x100, 0x304})
}
