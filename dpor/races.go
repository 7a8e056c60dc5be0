package dpor

import (
	"fmt"
	"slices"

	"landslide/record"
)

// The race machinery the reducing strategies (dpor, optimal, cb-dpor)
// share: transitions as events they compare, the thesis's tagging rule
// for a conflicting pair, mutexes' acquisitions as races, and the safety
// nets for what a branch never ran (threads a transition disabled for
// good, threads waiting for a lock; the threads its end cut off are the
// explorer's probe, Path.probe). Each works through the Path a strategy
// is given.

// event is a transition as the strategy compares it: its thread, what it
// touched, and the threads whose runnability it changed.
type event struct {
	thread record.TID
	value  int64 // the choice's value (an _xbegin's, or the nondet call's the transition ends at)
	// fresh: the value is open (the reversed side of a race, whose
	// transition may differ): every variant is explored where it runs.
	fresh bool
	// variant: the transition ended at a nondet call; its siblings are
	// the other values' (see advance).
	variant bool
	// open: the reversed side of a race whose run before its partner
	// could not be seen (see rerunSeq): its keys are what it touched after
	// the partner, a guess, so it commutes with nothing (weakInitial).
	open bool
	// xbegin: the transition starts at an _xbegin, so it is one of
	// several outcomes (the transaction commits, or aborts with a
	// status): its thread can run another one there (see advance and
	// weakInitial).
	xbegin bool
	// ends: the transition ended the program with other threads alive (an
	// exit: endsOthers): it is dependent with every event of another
	// thread, wherever it runs.
	ends  bool
	keys  []keyMask
	flips []record.TID
}

// dependent reports whether a and b do not commute.
func (a *event) dependent(b *event) bool {
	if a.thread == b.thread || a.ends || b.ends || contains(a.flips, b.thread) || contains(b.flips, a.thread) {
		return true
	}
	return keysConflict(a.keys, b.keys)
}

// choice is the choice that runs the event.
func (a *event) choice() record.Choice { return record.Choice{Thread: a.thread, Value: a.value} }

// runs reports whether a stands for b, a transition of the same thread:
// the same choice, or a's value open.
func (a *event) runs(b *event) bool {
	return a.thread == b.thread && (a.fresh || !b.fresh && a.value == b.value)
}

// event is transition k of the branch as the strategy compares it.
// A transition that ended the execution (a failure, an exit) disabled
// every other thread that could run.
func eventAt(x Path, k int) event {
	trs := x.transitions()
	an := x.analysis()
	e := event{thread: trs[k].Thread, value: x.choiceValue(k), keys: an.keys[k], flips: an.flips[k]}
	e.variant = k < x.depth() && x.nodeValues(k, e.thread) > 0
	e.xbegin = k < x.depth() && x.atXbegin(k, e.thread)
	e.ends = endsOthers(trs[k])
	if k == len(trs)-1 && x.depth() == len(trs) {
		for _, q := range x.node(k).runnable {
			if q != e.thread {
				e.flips = append(slices.Clip(e.flips), q)
			}
		}
	}
	return e
}

// lockRace: a lock j of a mutex races, as a memory conflict, with the
// unlock i that released it before, but that order cannot be reversed (the
// lock would wait for the unlock). The race to reverse is with the
// acquisition that unlock ended (Nidhugg's lock races): the last
// transition of i's thread up to i that took the mutex.
func lockRace(x Path, i, j int) int {
	trs := x.transitions()
	m, ok := lockTaken(trs[j], false)
	if !ok || !releases(trs[i], m) {
		return i
	}
	for k := i; k >= 0; k-- {
		if trs[k].Thread != trs[i].Thread {
			continue
		}
		if n, ok := lockTaken(trs[k], true); ok && n == m {
			return k
		}
	}
	return i
}

// lockTaken is the mutex a transition acquired in one atomic step that
// waits while the mutex is held (the kernel's pthread_mutex_lock: its
// SyncEnter and SyncReturn together, at one PC), if any. A trylock
// (record.TryLock) never waits, so its races with unlocks are reversible
// as they are; a lock function of a thread library (the P2 API) takes its
// lock through its own accesses, which the races see.
// With try, a trylock that took the mutex counts too.
func lockTaken(tr *record.Transition, try bool) (uint64, bool) {
	for k := 0; k+1 < len(tr.Sync); k++ {
		e, r := &tr.Sync[k], &tr.Sync[k+1]
		if e.Kind == record.SyncEnter && e.Func == record.MutexLock && r.Kind == record.SyncReturn &&
			r.Func == record.MutexLock && r.Arg == e.Arg && r.PC == e.PC && (try || e.Other != record.TryLock) {
			return e.Arg, true
		}
	}
	return 0, false
}

// releases reports whether tr released mutex m (and did not take it
// again after).
func releases(tr *record.Transition, m uint64) bool {
	rel := false
	for _, e := range tr.Sync {
		switch {
		case e.Kind == record.SyncEnter && e.Func == record.MutexUnlock && e.Arg == m:
			rel = true
		case e.Kind == record.SyncReturn && e.Func == record.MutexLock && e.Arg == m:
			rel = false
		}
	}
	return rel
}

// tagPair applies the thesis's tagging rule to the conflict (i, j). When
// j's thread was at its _xbegin at i and took an injected abort on the
// way to j, the reversal runs that abort at i. A conflict abort is not
// moved: it must follow the access that causes it, and the orders of the
// transaction itself are the reversals of the branch where it ran (where
// its CONFLICT was injected).
func tagPair(x Path, i, j int) {
	trs := x.transitions()
	n := x.node(i)
	p := trs[j].Thread
	if contains(n.runnable, p) {
		if v := x.nextValue(i, j, p); v != 0 && x.atXbegin(i, p) {
			if v&record.XabortConflict == 0 {
				x.inject(i, p, v)
			}
			return
		}
		x.tag(i, p)
		return
	}
	for _, q := range n.runnable {
		if q != trs[i].Thread {
			x.tag(i, q)
		}
	}
}

// tagLockWaits: a thread that cannot run because its next step locks a
// mutex another thread took (record.LockWaiter) never ran that lock on
// this branch, so no conflict shows the race between the two
// acquisitions: run it first at the node of the acquisition (among the
// branch's first n transitions). The machine is at the state to ask.
func tagLockWaits(x Path, n int) {
	trs := x.transitions()
	lw, ok := x.machine().(record.LockWaiter)
	if !ok {
		return
	}
	seen := map[record.TID]bool{}
	for _, tr := range trs {
		p := tr.Thread
		if seen[p] {
			continue
		}
		seen[p] = true
		m, ok := lw.LockWait(p)
		if !ok {
			continue
		}
		for k := n - 1; k >= 0; k-- {
			if l, ok := lockTaken(trs[k], true); ok && l == m && trs[k].Thread != p {
				if contains(x.node(k).runnable, p) {
					x.tag(k, p)
				} else {
					for _, q := range x.node(k).runnable {
						if q != trs[k].Thread {
							x.tag(k, q)
						}
					}
				}
				break
			}
		}
	}
}

// tagDisabled: a transition that disabled a runnable thread which then
// never ran again on this branch is a race that no later transition of
// that thread reveals; reorder them (the thread runs first at that node).
func tagDisabled(x Path) {
	trs := x.transitions()
	an := x.analysis()
	for i := range trs {
		if i >= len(an.flips) {
			break
		}
		for _, u := range an.flips[i] {
			if !contains(an.before[i], u) {
				continue // enabled, not disabled
			}
			ranLater := false
			for k := i + 1; k < len(trs); k++ {
				if trs[k].Thread == u {
					ranLater = true
					break
				}
			}
			if !ranLater {
				x.tag(i, u)
			}
		}
	}
}

// mayRunOtherwise reports whether transition j may do something else when
// run before transition i: it touched what i, or a transition between
// them that happens after i, wrote.
func mayRunOtherwise(x Path, i, j int) bool {
	an := x.analysis()
	if an.overwrites(i, j) {
		return true
	}
	for k := i + 1; k < j; k++ {
		if an.happensAfter(i, k) && an.overwrites(k, j) {
			return true
		}
	}
	return false
}

// sleeping is Landslide's sleep-set check (equiv_already_explored), with
// Spec.LandslideSleepSets. Unsound where a transition's accesses depend on
// the values it reads (TestStateDependentAccesses): t_n, compared below,
// runs after t_i and may differ from what q runs at i. c's thread
// q's next transition from node i is t_n, made by the same choice c (the
// same _xbegin result); if some ancestor k < i already explored c and
// every transition from k to i is independent of t_n, then running c at
// i is equivalent to a subtree already tested.
func sleeping(x Path, i int, c record.Choice) bool {
	trs := x.transitions()
	an := x.analysis()
	q := c.Thread
	n := -1
	for k := i; k < len(trs); k++ {
		if trs[k].Thread == q {
			n = k
			break
		}
	}
	var value int64
	if n >= 0 && n < len(x.branchChoices()) {
		value = x.branchChoices()[n].Value
	}
	if n < 0 || value != c.Value {
		return false // t_n is not what c runs
	}
	// t_n must be what q would run at i: nothing between (other than t_i,
	// the transition the tag reorders) may affect it.
	for m := i + 1; m < n; m++ {
		if an.dependent(m, n) {
			return false
		}
	}
	for k := i - 1; k >= 0; k-- {
		if trs[k].Thread == q || an.dependent(k, n) {
			return false
		}
		if x.node(k).tried(c) {
			return true
		}
	}
	return false
}

func saveEvents(es []event) []FrontierEvent {
	var out []FrontierEvent
	for i := range es {
		out = append(out, es[i].save())
	}
	return out
}

// saveEventPtr saves an optional event (nil stays nil).
func saveEventPtr(e *event) *FrontierEvent {
	if e == nil {
		return nil
	}
	o := e.save()
	return &o
}

// loadEventPtr loads an optional event (nil stays nil).
func loadEventPtr(o *FrontierEvent) (*event, error) {
	if o == nil {
		return nil, nil
	}
	e, err := o.load()
	if err != nil {
		return nil, err
	}
	return &e, nil
}

func loadEvents(fs []FrontierEvent) ([]event, error) {
	var out []event
	for i := range fs {
		e, err := fs[i].load()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (e *event) save() FrontierEvent {
	o := FrontierEvent{Thread: e.thread, Value: e.value, Fresh: e.fresh, Open: e.open, Variant: e.variant, Xbegin: e.xbegin, Ends: e.ends, Flips: slices.Clone(e.flips)}
	for _, k := range e.keys {
		o.Keys = append(o.Keys, k.key)
		o.Masks = append(o.Masks, uint16(k.r)|uint16(k.w)<<8)
	}
	return o
}

func (o *FrontierEvent) load() (event, error) {
	if len(o.Keys) != len(o.Masks) || o.Thread <= 0 || o.Value < 0 {
		return event{}, fmt.Errorf("%w: optimal DPOR: an event of thread %d (value %d) with %d keys and %d masks", ErrFrontier, o.Thread, o.Value, len(o.Keys), len(o.Masks))
	}
	e := event{thread: o.Thread, value: o.Value, fresh: o.Fresh, open: o.Open, variant: o.Variant, xbegin: o.Xbegin, ends: o.Ends, flips: slices.Clone(o.Flips)}
	for i, k := range o.Keys {
		if i > 0 && k <= o.Keys[i-1] {
			return event{}, fmt.Errorf("%w: optimal DPOR: an event's keys are out of order", ErrFrontier)
		}
		e.keys = append(e.keys, keyMask{key: k, r: uint8(o.Masks[i]), w: uint8(o.Masks[i] >> 8)})
	}
	return e, nil
}
