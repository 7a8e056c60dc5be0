package dpor

import (
	"fmt"
	"slices"

	"landslide/record"
)

// Transactional memory (thesis §6.2.2). A thread stopped at an _xbegin
// (its last transition ended with record.PPXbegin) has, besides running
// on (the transaction starts), one child per abort status the mode
// allows: a choice with that Value (record.Choice), "injected" at the
// node. The path keeps, per node, the threads at an _xbegin there, the
// injected choices still to explore (the thesis's xabort_codes_todo),
// and every one ever injected (xabort_codes_ever), which the estimator
// counts as marked children. Injected choices are explored before the
// node's tagged threads (the thesis's search order).
//
// Which statuses: RETRY (the hardware may abort any transaction) at
// each node where a thread starts a transaction (so wherever a
// transaction is tried, its abort is tried too), unless Spec.STM; with
// Spec.AbortCodes, CONFLICT at the node before a transaction that
// conflicts with an earlier transition of another thread (a conflict
// abort must follow the access that causes it); and, where DPOR reverses
// a race whose later side is an abort, that abort where the reversal
// puts it (tagPair). What a transaction does to itself (_xabort, a system
// call) is no choice: the machine rolls it back (kernel's htm.go), and
// the dpor strategy stops the branch there when the node's injected
// abort explores what follows (stopAtSelfAbort). Under
// Spec.WeakAtomicity a transaction spans transitions and only another
// transaction's conflicting access aborts it (injectWeakConflicts).

// atXbegin reports whether thread q is stopped at an _xbegin at node i.
func (x *Explorer) atXbegin(i int, q record.TID) bool {
	return slices.Contains(x.nodes[i].xb, q)
}

// xbeginAfter is the set of threads at an _xbegin at the node after
// transition tr, given the set at the node before it.
func xbeginAfter(before []record.TID, tr *record.Transition) []record.TID {
	out := slices.DeleteFunc(slices.Clone(before), func(t record.TID) bool { return t == tr.Thread })
	if tr.PP.Kind == record.PPXbegin {
		i, _ := slices.BinarySearch(out, tr.Thread)
		out = slices.Insert(out, i, tr.Thread)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// inject adds the choice of thread q with abort status v at node i,
// through the filters: already injected, beyond the round's preemption
// bound.
func (x *Explorer) inject(i int, q record.TID, v int64) {
	n := &x.nodes[i]
	ch := record.Choice{Thread: q, Value: v}
	if !contains(n.runnable, q) && !(x.opt.WeakAtomicity && x.atXbegin(i, q)) || n.triedOrToDo(ch) || !x.admits(i, ch) {
		return
	}
	if !slices.Contains(n.injected, ch) {
		n.injected = append(n.injected, ch)
	}
	n.inject = append(n.inject, ch) // again, where it ran only under a narrower retry set
}

// choiceValue is the value of the choice that made transition j (0 for
// the transitions a probe adds beyond the branch's choices).
func (x *Explorer) choiceValue(j int) int64 {
	if j < len(x.choices) {
		return x.choices[j].Value
	}
	return 0
}

// nextValue is the value of thread p's first choice from node i on (up
// to transition j, which is p's).
func (x *Explorer) nextValue(i, j int, p record.TID) int64 {
	for k := i; k <= j; k++ {
		if x.trs[k].Thread == p {
			return x.choiceValue(k)
		}
	}
	return 0
}

// tried reports whether choice c was explored at node i (an injected
// one: injected and no longer to do; a thread: under retry sets, under
// no narrower set than the node's constraints).
func (n *node) tried(c record.Choice) bool {
	if c.Value == 0 {
		return contains(n.explored, c.Thread) && !contains(n.narrow, c.Thread)
	}
	return slices.Contains(n.injected, c) && !slices.Contains(n.inject, c) && !slices.Contains(n.narrowInj, c)
}

// triedOrToDo reports whether injected choice c was explored at node i
// or is still to do there.
func (n *node) triedOrToDo(c record.Choice) bool {
	return n.tried(c) || slices.Contains(n.inject, c)
}

// injectRetry injects RETRY for q at node i if q is at an _xbegin there
// and the mode has retry aborts.
func (x *Explorer) injectRetry(i int, q record.TID) {
	if x.retryAt(i, q) {
		x.inject(i, q, record.XabortRetry)
	}
}

// retryAt reports whether q is at an _xbegin at node i and the mode has
// retry aborts there.
func (x *Explorer) retryAt(i int, q record.TID) bool {
	return !x.opt.STM && x.atXbegin(i, q) && x.retryAllows(i, q)
}

// errNoConflictAborts is the error of a strategy that does not inject
// CONFLICT aborts, so cannot run with Spec.AbortCodes: optimal DPOR's
// wakeup sequences would move an abort before the access that causes it,
// and CB-DPOR's preemption-only sleep sets were never checked with them.
func errNoConflictAborts(strategy string) error {
	return fmt.Errorf("%s does not inject CONFLICT aborts, so it does not take distinct abort codes or STM mode (--abort-codes, --stm): use the dpor strategy", strategy)
}

// injectConflicts adds, with Spec.AbortCodes, a CONFLICT abort before
// each transaction of the new interleaving that conflicts with an
// earlier transition of another thread.
func (x *Explorer) injectConflicts(pairs [][2]int) {
	if !x.opt.AbortCodes {
		return
	}
	if x.opt.WeakAtomicity {
		x.injectWeakConflicts()
		return
	}
	for _, p := range pairs {
		j := p[1]
		if j >= len(x.choices) || x.choices[j].Value != 0 || x.trs[p[0]].Thread == x.trs[j].Thread {
			continue
		}
		if q := x.trs[j].Thread; x.atXbegin(j, q) {
			x.inject(j, q, record.XabortConflict)
		}
	}
}

// injectWeakConflicts is injectConflicts under weak atomicity. A
// transaction spans transitions, only another transaction's access
// aborts it, and transactions are ordered by the lock they share
// (record.TxnLockAddr), so their conflicts are no races: each
// transactional transition j of the new interleaving is checked against
// every earlier transactional transition i of another thread. A
// conflict aborts j's transaction at its _xbegin, or right after i,
// where the thread waits at its _xbegin for the other transaction to end.
func (x *Explorer) injectWeakConflicts() {
	start := x.txnStarts()
	for j := x.lastDiv; j < len(x.trs) && j < len(x.choices); j++ {
		q, s := x.trs[j].Thread, start[j]
		if s < 0 {
			continue
		}
		for i := 0; i < j; i++ {
			if x.trs[i].Thread == q || start[i] < 0 || !dataConflict(x.trs[i], x.trs[j]) {
				continue
			}
			x.inject(s, q, record.XabortConflict)
			if a := i + 1; a < s && x.atXbegin(a, q) {
				x.inject(a, q, record.XabortConflict)
			}
		}
	}
}

// txnStarts gives, for each transition k of the branch, the index of the
// transition with which its thread started the transaction k runs in, or
// -1 if k runs in none (under weak atomicity a transaction spans
// transitions; the transition granularity makes this an
// over-approximation: k may also run code after the commit).
func (x *Explorer) txnStarts() []int {
	start := make([]int, len(x.trs))
	cur := map[record.TID]int{} // each thread's transaction in flight
	for k, tr := range x.trs {
		q := tr.Thread
		s, ok := cur[q]
		if !ok {
			s = -1
		}
		if x.atXbegin(k, q) {
			s = -1
			if x.choiceValue(k) == 0 {
				s = k
			}
		}
		start[k] = s
		if endsTxn(tr) {
			s = -1
		}
		cur[q] = s
	}
	return start
}

// dataConflict reports whether a and b conflict on memory other than
// record.TxnLockAddr (the order of two transactions is no conflict
// between them).
func dataConflict(a, b *record.Transition) bool {
	for _, e := range a.Accesses {
		if e.Addr == record.TxnLockAddr {
			continue
		}
		for _, f := range b.Accesses {
			if (e.Write || f.Write) && f.Addr < e.Addr+uint64(e.Size) && e.Addr < f.Addr+uint64(f.Size) && f.Addr != record.TxnLockAddr {
				return true
			}
		}
	}
	return false
}

// endsTxn reports whether tr commits or aborts a transaction.
func endsTxn(tr *record.Transition) bool {
	for _, e := range tr.Sync {
		if e.Kind == record.SyncTxnEnd || e.Kind == record.SyncTxnAbort {
			return true
		}
	}
	return false
}

// selfAbortStopper is an optional interface of a Strategy that stays
// complete when a branch stops at a transaction that aborted itself
// (stopAtSelfAbort). The dpor strategy is one: its tags are threads at
// nodes, and what a stopped branch would have found is the injected
// abort's subtree's to find. Optimal DPOR is not: a wakeup sequence
// from another branch may run past such a transaction, and stopping
// there would drop the rest of the sequence. Full enumeration, the
// oracle, explores every branch whole.
type selfAbortStopper interface{ stopsAtSelfAborts() }

// stopAtSelfAbort reports whether the branch stops after transition tr,
// which choice ch of thread q ran from node i: q's transaction started
// (ch.Value is 0) and aborted itself (_xabort, a system call), and the
// abort the transaction's rollback left, q's _xbegin returning that
// status with nothing else changed, is a child of node i that is
// injected, explored or to be. What follows tr then repeats that
// child's subtree from the same state: the thesis's Landslide ends the
// branch at the _xabort (§6.2.2, "execution of the transactional path
// immediately stops"), and so do we.
//
// tr keeps the body's reads (the kernel's selfAbort), so the races of
// those reads with earlier writes are reversed as in any branch. What the
// stop loses are the races of those reads with writes the other threads
// would have made after tr (a write that makes q's transaction commit
// if run first): their reversals run another thread at node i, so every
// other runnable thread is tagged there, as a reversal's tag, through
// the usual filters (explored, asleep, the bound).
//
// An abort that is only asleep at node i does not count. Its sleep entry
// says that an earlier subtree, at an ancestor where the abort ran
// before the transitions since, holds its states; but that subtree may
// have left a reversal to a later one that is this branch's own
// continuation, and the stop would then lose what both leave to the
// other (TestSelfAbortStops's "asleep abort", shrunk from the one of
// its first 1,000 random programs of which plain dpor missed a final
// state before this rule). The twin explored at node i itself finds
// every race the continuation would, with the same prefix.
//
// Only in strong atomicity: under Spec.WeakAtomicity the other threads
// run while the transaction does, and no child of node i repeats the
// abort's state. With Spec.AbortCodes the status is EXPLICIT or CAPACITY,
// which is never injected (the thesis injects it, a child more at each
// such node), so the branch goes on. Under retry sets an injected child
// counts only if it ran (or is to run) under the node's constraints, not
// under a narrower set only.
func (x *Explorer) stopAtSelfAbort(i int, ch record.Choice, tr *record.Transition) bool {
	if !x.stopsSelfAborts || ch.Value != 0 || x.opt.WeakAtomicity || x.opt.keepSelfAborts {
		return false
	}
	st, ok := tr.SelfAbort()
	if !ok {
		return false
	}
	n := &x.nodes[i]
	twin := record.Choice{Thread: ch.Thread, Value: int64(st)}
	if !n.triedOrToDo(twin) {
		return false // not injected here, or only asleep
	}
	x.race = race{} // no retry set: these tags explore freely
	for _, r := range n.runnable {
		if r != ch.Thread {
			x.tag(i, r)
		}
	}
	return true
}
