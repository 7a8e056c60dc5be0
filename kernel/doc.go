// Package kernel is the guest kernel: it loads an RV64 ELF into emu/mem,
// runs its threads on one emu/cpu hart, serves the Pebbles-like system calls
// of sdk/include/landslide_abi.h, owns the heap (so every block is tracked
// exactly), detects the guest's bugs, and implements record.Machine, the
// seam to the explorer.
//
// Threads. All threads share one address space and one CPU; switching a
// thread swaps the register file. Exactly one thread runs per transition
// (thesis §1 invariant): the kernel never switches on its own, it only stops
// at the next preemption point (PP) and lets the caller choose.
//
// PPs. Mandatory (whatever the configuration): yield, deschedule,
// make_runnable, thread creation (the parent stops right after), thread exit
// and sleep; for transactional memory (htm.go) _xbegin (before it: its
// result is the choice's Value) and _xend (after the commit); the pthread
// calls (sys_pthread.go, before each), and with Config.ModelThreads the
// reference library's thr_create, thr_join and thr_exit, which the kernel
// runs as those calls (thrlib.go); and a __VERIFIER_nondet call of more
// than one value (sys_nondet.go, before it: the value is the Value of the
// choice that ran the thread there). Configurable: entry of functions named in Config.SyncPPs
// (default mutex_lock, mutex_unlock), instruction addresses
// (Config.DataRacePCs), and tell_landslide_preempt(); all three pass
// through the within/without filters (thesis §3.4.1, check_withins).
// Function-entry and data-race PPs are CPU breakpoints: the transition ends
// before the instruction executes.
//
// Recording. While a thread runs, every guest load, store and atomic is
// seen by the kernel's cpu.Tracker; accesses inside the thread's own stack
// are dropped and the rest form the transition's access set, with heap
// block ids and generations. Where a pointer into the stack escaped to
// another thread, the owner's accesses to that call frame go to the
// transition's Own set (exposure.go): dependences, not race candidates.
// A thread's thread-local storage block sits at the top of its stack
// (tls.go), so the same rules apply to it.
// Sync events (create, exit, block, unblock, enter/return of known sync
// functions with their first argument, alloc, free, a look at or change
// of a thread's run state) go in the same record.
//
// Waiting and ending. A thread that spins on memory without progress is
// blocked until another thread changes what it read (spin.go: the rule,
// and why it drops no reachable state); the thesis's loop counters run
// only with Config.ThesisHeuristics. A process exit in a program that had
// a second thread is a PP of its own (PPExitCall) and kills the threads
// still alive (record.SyncKill), which the explorer takes as a dependency
// with every step of theirs; Config.WaitForThreads makes main's return end
// main only. An execution with a thread stopped by __VERIFIER_assume(0)
// ends blocked (record.Blocker).
//
// SV-COMP's conventions (Config.SVCOMP, svcomp.go): entering reach_error
// is the bug; abort, glibc's failed assert and a failed assume end the
// program as an exit does, without a bug, and a deadlock is an end
// state; __VERIFIER_atomic sections run without access or configured
// PPs; the PP before a condition wait takes a second value, a spurious
// wake-up.
//
// State split (thesis §3.3 "time travel"). Everything that a snapshot must
// restore lives in the state struct (threads, heap metadata, page regions,
// the output so far, counters) or in emu/mem; Snapshot copies state (its
// threads are shared until written: Kernel.own copies a thread the live
// state writes when a snapshot may share it, and tests check that no
// snapshot's thread changes, verifySnapshots) and takes an O(1) memory
// snapshot. Release (record.Releaser) recycles what only a snapshot the
// search is done with reached: its memory's pages and nodes (emu/mem M5),
// the threads copied in the epoch it ended, the snapshot itself. What
// persists across restores (decoded code, breakpoints, configuration)
// lives in Kernel.
//
// Guest code is untrusted: every pointer it passes is read through the
// memory's checked accessors, every count is bounded, and no guest
// behaviour can panic the host or run unbounded (instruction budget,
// PP-depth and thread/memory limits).
package kernel
