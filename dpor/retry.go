package dpor

import (
	"maps"
	"slices"

	"landslide/record"
)

// Retry sets (thesis §6.2.5, Spec.RetrySets): when DPOR tags a thread to
// reverse a race of which one side is a committed transaction, it
// records the pair of _xbegin results that made the race (the retry
// set) with the tag. In the subtree the tag explores, those threads take
// those results where they next pass their _xbegin, and their other
// results are not tried there: reordering them is independent of the
// race the tag reverses, and another race would tag them itself. The
// thread the reversal preempts is "retry-set blocked": the default
// schedule passes it over until the other thread has passed its _xbegin,
// and where that would deadlock the node's sets are abandoned
// (unblocked). A tag also placed for a race without a transaction is
// free (no set). Like the thesis's, the reduction has no proof; its
// exact counts (Fig. 6.8) and the soundness tests check it.

// Results a retry set allows a thread, and whether it waits.
const (
	resSuccess uint8 = 1 << iota // the transaction starts
	resAbort                     // _xbegin returns an abort status
	// resWait: the race's preempted thread; it is "retry-set blocked"
	// (the default schedule passes it over) until every other thread of
	// the set has passed its _xbegin.
	resWait
	resResults = resSuccess | resAbort
)

// retryCons maps threads to the _xbegin results allowed at their next
// pass (absent threads are free).
type retryCons map[record.TID]uint8

// RetryTag is what the retry sets of the races that tagged a thread at
// a node allow: free (some race without a transaction tagged it) or the
// union of the sets.
type RetryTag struct {
	Free bool
	Cons retryCons
}

// RetryResult is one thread's allowed results in a stored constraint.
type RetryResult struct {
	Thread record.TID
	Bits   uint8
}

// FrontierRetry is a stored retry tag: thread Thread's tag at the node.
type FrontierRetry struct {
	Thread record.TID
	Free   bool
	Cons   []RetryResult `msgpack:",omitempty"`
}

// consList is c as a list sorted by thread (nil for none).
func consList(c retryCons) []RetryResult {
	var out []RetryResult
	for q, b := range c {
		out = append(out, RetryResult{q, b})
	}
	slices.SortFunc(out, func(a, b RetryResult) int { return int(a.Thread) - int(b.Thread) })
	return out
}

func consMap(l []RetryResult) retryCons {
	if len(l) == 0 {
		return nil
	}
	c := retryCons{}
	for _, r := range l {
		c[r.Thread] = r.Bits
	}
	return c
}

// retryList is a node's retry tags as a list sorted by thread.
func retryList(m map[record.TID]*RetryTag) []FrontierRetry {
	var out []FrontierRetry
	for q, t := range m {
		out = append(out, FrontierRetry{Thread: q, Free: t.Free, Cons: consList(t.Cons)})
	}
	slices.SortFunc(out, func(a, b FrontierRetry) int { return int(a.Thread) - int(b.Thread) })
	return out
}

func retryMap(l []FrontierRetry) map[record.TID]*RetryTag {
	if len(l) == 0 {
		return nil
	}
	m := map[record.TID]*RetryTag{}
	for _, t := range l {
		cons := consMap(t.Cons)
		if cons == nil && !t.Free {
			cons = retryCons{}
		}
		m[t.Thread] = &RetryTag{Free: t.Free, Cons: cons}
	}
	return m
}

// result is the _xbegin result behind transition k: the value thread
// trs[k].Thread chose at its latest pass of an _xbegin up to k, and the
// index of that pass (-1 if the thread passed none; k itself when k is
// the transaction's body).
func (x *Explorer) result(k int) (bits uint8, at int) {
	q := x.trs[k].Thread
	for m := k; m >= 0; m-- {
		if x.trs[m].Thread != q || !x.atXbegin(m, q) {
			continue
		}
		if x.choiceValue(m) != 0 {
			return resAbort, m
		}
		return resSuccess, m
	}
	return 0, -1
}

// noteRace prepares the retry set of race (i, j) for the tag tagPair is
// about to place (nil: free). The set holds the results of the two
// _xbegin passes behind the race that the reversal, which starts at
// node i, runs again; a pass before node i is in the branch's prefix,
// its result fixed there, and no later pass of that thread is the
// race's.
func (x *Explorer) noteRace(i, j int) {
	x.rsNext = nil
	if !x.opt.RetrySets || j >= len(x.choices) {
		return
	}
	ri, ai := x.result(i)
	rj, aj := x.result(j)
	if !(ai == i && ri == resSuccess) && !(aj == j && rj == resSuccess) {
		return // neither side is a committed transaction
	}
	c := retryCons{}
	if ai >= i {
		c[x.trs[i].Thread] = ri
	}
	if aj >= i {
		c[x.trs[j].Thread] = rj
	}
	// The reversal runs j's thread at i: i's thread waits for it.
	c[x.trs[i].Thread] |= resWait
	x.rsNext = c
}

// RetrySetsCaveat is Result.Caveat where retry sets met an _xbegin.
const RetrySetsCaveat = "retry sets (-R) are not exact: they can miss final states of programs whose threads run several transactions; without -R the dpor strategy reaches them all"

// noteTag merges the prepared retry set into the tag of thread q at
// node i.
func (x *Explorer) noteTag(i int, q record.TID) {
	if !x.opt.RetrySets {
		return
	}
	n := &x.nodes[i]
	if n.rtags == nil {
		n.rtags = map[record.TID]*RetryTag{}
	}
	t := n.rtags[q]
	if t == nil {
		t = &RetryTag{Cons: retryCons{}}
		n.rtags[q] = t
	}
	if x.rsNext == nil {
		// Free for good: a later retry set must not restrict what this
		// race's reversal explores.
		t.Free, t.Cons = true, nil
		return
	}
	if !t.Free {
		for th, bits := range x.rsNext {
			t.Cons[th] |= bits
		}
	}
}

// constrain applies the constraints in force to choice ch of thread q at
// node k (fromTag: the branch starts here with q's tag): a thread at its
// _xbegin that a retry set allows only an abort aborts. It returns the
// choice and the constraints for the next node.
func (x *Explorer) constrain(k int, ch record.Choice, fromTag bool) (record.Choice, retryCons) {
	n := &x.nodes[k]
	cons := n.consIn
	if fromTag && ch.Value == 0 {
		if t := n.rtags[ch.Thread]; t != nil && !t.Free && len(t.Cons) > 0 {
			cons = maps.Clone(cons)
			if cons == nil {
				cons = retryCons{}
			}
			maps.Copy(cons, t.Cons)
		}
	}
	if !x.atXbegin(k, ch.Thread) {
		return ch, cons
	}
	if bits, ok := cons[ch.Thread]; ok {
		if ch.Value == 0 && bits&resResults == resAbort {
			ch.Value = record.XabortRetry
		}
		cons = maps.Clone(cons)
		delete(cons, ch.Thread) // it has passed
		if len(cons) == 0 {
			cons = nil
		}
	}
	return ch, cons
}

// retryAllows reports whether the constraints at node i let thread q
// abort at its _xbegin.
func (x *Explorer) retryAllows(i int, q record.TID) bool {
	bits, ok := x.nodes[i].consIn[q]
	return !ok || bits&resResults != resSuccess
}

// waits reports whether the constraints cons hold thread q back: q is a
// race's preempted thread, and another thread of the set has yet to pass
// its _xbegin. (Two threads that each wait for the other hold none back:
// the sets saturate.)
func waits(cons retryCons, q record.TID) bool {
	if cons[q]&resWait == 0 {
		return false
	}
	for t, b := range cons {
		if t != q && b&resWait == 0 {
			return true
		}
	}
	return false
}

// unblocked is the default choice q at node k unless the retry sets in
// force hold it back: then the first runnable thread they do not. If
// they hold back every runnable thread, the wait would deadlock, and the
// node's sets are abandoned: no thread waits from there on.
func (x *Explorer) unblocked(k int, q record.TID) record.TID {
	n := &x.nodes[k]
	if !waits(n.consIn, q) {
		return q
	}
	for _, r := range n.runnable {
		if !waits(n.consIn, r) {
			return r
		}
	}
	cons := retryCons{}
	for t, b := range n.consIn {
		if b &^= resWait; b != 0 {
			cons[t] = b
		}
	}
	if len(cons) == 0 {
		cons = nil
	}
	n.consIn = cons
	return q
}
