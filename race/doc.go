// Package race turns DPOR's memory conflicts into data-race candidates
// (thesis §2.3 and §3.4.4, check_locksets), in one of two modes:
//
//   - Limited HB (-H): the caller's pairs are already conflicts that the
//     scheduling-only happens-before does not order, so an access pair races
//     iff the locksets at the two accesses are disjoint (Eraser-style
//     locksets from the mutex annotations). It catches races hidden behind
//     an unrelated lock (thesis Fig. 2.6a) at the price of false positives
//     (Fig. 2.6b).
//   - Pure HB (-V): Djit+ vector clocks. An access pair races iff the
//     earlier access does not happen-before the later one, with
//     happens-before edges from mutex_unlock entry (release) to a later
//     mutex_lock return (acquire) on the same mutex, from a thread to the
//     thread it creates, and from a thread to the thread it makes runnable.
//
// Input. For each completed interleaving ("branch") the caller passes the
// transitions in execution order and the transition index pairs (i, j),
// i < j, that DPOR found to conflict and that its scheduling happens-before
// leaves unordered. Within each such pair, every pair of accesses whose byte
// ranges overlap, of which at least one writes and at least one is not
// atomic, is tested: two atomic instructions (amo*, lr/sc) never race with
// each other, as in the C11 model, while an atomic against a plain access
// can (the thesis reported any access not protected by a known mutex,
// atomics included, which made every lock word a candidate).
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
// are ignored unless Options.TestingMutexes, in which case they count as
// unprotected (an empty lockset; vector clocks as they are).
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
