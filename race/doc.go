// Package race turns DPOR's memory conflicts into data-race candidates
// (thesis §2.3 and §3.4.4, check_locksets), in one of two modes:
//
//   - Limited HB (-H): the caller's pairs are already conflicts that the
//     scheduling-only happens-before does not order, so an access pair races
//     iff the locksets at the two accesses are disjoint (Eraser-style
//     locksets from the mutex annotations) and the C11 happens-before below
//     (atomics, fences, thread creation and join, program order; no mutex
//     edges) does not order it. It catches races hidden behind an
//     unrelated lock (thesis Fig. 2.6a) at the price of false positives
//     (Fig. 2.6b), while a release/acquire handoff orders.
//   - Pure HB (-V): Djit+ vector clocks. An access pair races iff the
//     earlier access does not happen-before the later one, with
//     happens-before edges from mutex_unlock entry (release) to a later
//     mutex_lock return (acquire) on the same mutex, from a thread to the
//     thread it creates, and from a thread to the thread it makes runnable,
//     besides the C11 edges below.
//
// Input. For each completed interleaving ("branch") the caller passes the
// transitions in execution order and the transition index pairs (i, j),
// i < j, that DPOR found to conflict and that its scheduling happens-before
// leaves unordered. Within each such pair, every pair of accesses whose byte
// ranges overlap, of which at least one writes and at least one is not
// atomic, is tested: two atomic instructions (amo*, lr/sc, C11 atomic
// loads and stores) never race with each other, as in the C11 model,
// while an atomic against a plain access can (the thesis reported any
// access not protected by a known mutex, atomics included, which made
// every lock word a candidate).
//
// Atomic conflicts. The same pairs, with both accesses atomic, are not
// data races but may be atomic conflicts (Analyzer.Conflicts, apart from
// the candidates in every output and in State): under the same mode
// (Limited: disjoint locksets and the C11 happens-before; Pure: the
// vector clocks, mutex edges included), the earlier access does not
// happen-before the later one's clock as it was before the later access's
// own read synchronised. The edge left out is the pair's own: an acquire
// load (or RMW) that reads a release store synchronises with it because
// it ran second, which is the order in question. Counted, it would order
// every store with the loads that read it, and a program of sequentially
// consistent atomics whose threads run one after another would have no
// conflict at all. What other synchronisation orders (an earlier acquire,
// a fence before, a lock, a join, creation) still orders. The
// init/destroy holding, the first-interleaving and free-re-malloc flags
// and both-order are as for candidates. Accesses inside the trusted
// mutex implementation are ignored as they are for races (unless
// Options.TestingMutexes). Quicksand makes atomic conflicts PPs, after
// every data race: a lock-free program whose every shared access is
// atomic has no data race, and its bugs are in the order of those
// accesses.
//
// C11 happens-before. Every execution here is sequentially consistent: an
// atomic read reads, for each of its bytes, the latest write of that byte
// in the interleaving. Accesses are replayed in execution order
// (transitions in order; within one, Record.Access.Sync places each
// access among the sync events), and each byte remembers the clock its
// latest write published:
//
//   - A release store (record.Access Release: a release or seq_cst store,
//     an .rl AMO or SC) publishes its thread's clock. A relaxed atomic
//     store publishes what the thread's latest release fence published,
//     else nothing (C++20: a store that is not an RMW ends the release
//     sequence before it, even the releaser's own). A plain write
//     publishes nothing.
//   - An RMW (an AMO, an SC after its LR) continues the release sequence:
//     the bytes keep what they published, joined with the thread's clock
//     if it is a release, and with its latest release fence's.
//   - An acquire read (Acquire: an acquire or seq_cst load, an .aq LR or
//     AMO) joins what its bytes publish into its thread's clock; a relaxed
//     atomic read keeps it for the thread's next acquire fence. An RMW
//     reads before it writes. A plain read synchronises with nothing.
//   - A fence (record.SyncFence): an acquire fence joins what the
//     thread's relaxed reads read since its previous acquire fence; a
//     release fence records the thread's clock for its later stores; a
//     seq_cst fence is both, the acquire first.
//   - Thread creation, and the exit of a thread before its join returns
//     (thr_join, pthread_join), are edges in both modes.
//
// Relaxed atomics thus race with nothing atomic and order nothing. What
// an access is comes from the record: an atomic write is an RMW when it
// has Acquire (a store never has) or directly follows, with no sync event
// between, an atomic read of the same address and size by the same
// transition (an LR and its SC: the kernel clears a reservation at every
// switch). A failed SC is not recorded: its CAS is the LR's read alone.
// The record has no RMW mark, so two guesses remain: an AMO without .aq
// is recorded exactly as a store and counts as one (it then ends a
// release sequence it would continue, and its read acquires nothing:
// more candidates, never fewer); and an atomic load directly followed by
// an atomic store of the same location in one transition counts as an
// LR/SC pair, which may order what a separate load and store would not
// (with every access a PP only an LR and its SC share a transition). Relaxed atomics written with the __atomic builtins and
// __ATOMIC_RELAXED compile to plain loads and stores and count as plain;
// the SDK's stdatomic.h marks its relaxed loads and stores. The kernel
// records a transition's accesses as a set (an instruction's repeat on
// the same location with no sync event between is dropped), so with
// several accesses per transition the replay may miss a later store that
// changed what a location publishes; with every access a PP
// (--every-access) nothing is lost.
//
// Replay. A thread holds a lock from the return of its acquire function
// (mutex_lock, rwlock_lock) to the entry of its release function
// (mutex_unlock, rwlock_unlock) with the same first argument; locks are
// keyed by (address, kind), so an rwlock and a mutex at one address are
// different locks; semaphores are not locks. Locks and clocks carry over
// from one transition of a thread to its next. Record.Access.Sync places
// each access among its transition's sync events. Accesses made inside
// mutex_lock, mutex_unlock, mutex_init or mutex_destroy (SyncEnter to the
// matching SyncReturn, nesting allowed) are the trusted implementation and
// are ignored, their atomics and fences too, unless
// Options.TestingMutexes, in which case they count as unprotected (an
// empty lockset; vector clocks as they are) and their atomics and fences
// synchronise as any do.
//
// Candidates. A candidate is identified by its unordered pair of PCs and
// accumulates across branches: whether it was seen in both orders (lower
// PC first and higher PC first), whether it was seen on the first branch
// (deterministic; the thesis's "nondeterministic" flag is the negation),
// whether every sighting had the free-re-malloc pattern (the accesses are
// on different allocations of the same heap memory), how many branches saw
// it, and where it was first seen. Single-order candidates with an access
// inside a sync API's init or destroy function are held back until they
// are seen in both orders (or seen outside init/destroy).
//
// All outputs are deterministic: nothing depends on map iteration order.
package race
