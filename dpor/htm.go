package dpor

import (
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
// Which statuses: RETRY (the hardware may abort any transaction) where a
// thread reaches its _xbegin and wherever the strategy tags a thread
// stopped at one (so every place a transaction is tried, its abort is
// tried too), unless Spec.STM; and, with Spec.AbortCodes, CONFLICT at
// the node before a transaction that conflicts with an earlier
// transition of another thread (a conflict abort must follow the access
// that causes it). What a transaction does to itself (_xabort, a system
// call) is no choice: the machine rolls it back (kernel's htm.go).

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
	switch {
	case !contains(n.runnable, q) || slices.Contains(n.injected, ch):
	case n.pre+n.cost(q) > x.bound:
		x.dropped = true
	default:
		n.injected = append(n.injected, ch)
		n.inject = append(n.inject, ch)
	}
}

// injectRetry injects RETRY for q at node i if q is at an _xbegin there
// and the mode has retry aborts.
func (x *Explorer) injectRetry(i int, q record.TID) {
	if !x.opt.STM && x.atXbegin(i, q) {
		x.inject(i, q, record.XabortRetry)
	}
}

// injectConflicts adds, with Spec.AbortCodes, a CONFLICT abort before
// each transaction of the new interleaving that conflicts with an
// earlier transition of another thread.
func (x *Explorer) injectConflicts(pairs [][2]int) {
	if !x.opt.AbortCodes {
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
