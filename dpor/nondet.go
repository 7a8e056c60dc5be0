package dpor

import (
	"slices"

	"landslide/record"
)

// Nondeterministic inputs (record.PPNondet, the SV-COMP
// __VERIFIER_nondet calls). The machine takes a call's value from the
// choice that runs the thread to the PP before the call (record.Valuer):
// the value is chosen as early as it can be, where the thread arrives at
// the call. The transitions that differ only by the value ("variants")
// touch the same memory; they differ in what the thread does after. So
// wherever a transition ends at a nondet call, the path explores its
// variants there, as siblings: the value 0 one first, the others
// injected (as the abort statuses of an _xbegin are, htm.go) and explored
// before the node's tags. The value is the thread's own nondeterminism:
// it commutes with every other thread; the races then work as for any
// transition, and the sleep sets tell choices apart by value (optimal
// DPOR keeps variants out of its sleep sets: see optimalStrategy.advance).
//
// A strategy may say that a choice needs no variants (valueSelector):
// a random walk never branches.

// valueSelector is an optional interface of a Strategy that says where
// the variants of a transition are needed: allValues is asked for each
// choice ch the path runs at node i, before it runs. Without it,
// everywhere.
type valueSelector interface {
	allValues(x Path, i int, ch record.Choice) bool
}

// values is how many values thread q's nondet call takes at the
// machine's current state (0 for a thread at no nondet call).
func (x *Explorer) values(q record.TID) int64 {
	if v, ok := x.m.(record.Valuer); ok {
		return v.Values(q)
	}
	return 0
}

// nodeValues is how many variants thread q's transition from node i has
// (0 if it ends at no nondet call, or is not known to).
func (x *Explorer) nodeValues(i int, q record.TID) int64 {
	n := &x.nodes[i]
	if n.vals == nil {
		return 0
	}
	if k := slices.Index(n.runnable, q); k >= 0 {
		return n.vals[k]
	}
	return 0
}

// noteValues: transition tr, made by choice ch at node i (the machine is
// at its end), ended at a nondet call: node i notes how many variants it
// has, and with fresh, the other variants are tagged (value 0) or
// injected there. A transition that started at an _xbegin took its value
// as the abort status: no variants.
func (x *Explorer) noteValues(i int, ch record.Choice, tr *record.Transition, fresh bool) {
	q := ch.Thread
	if tr.PP.Kind != record.PPNondet || x.atXbegin(i, q) {
		return
	}
	n := &x.nodes[i]
	vals := x.values(q)
	k := slices.Index(n.runnable, q)
	if vals <= 1 || k < 0 {
		return
	}
	if n.vals == nil {
		n.vals = make([]int64, len(n.runnable))
	}
	n.vals[k] = vals
	if !fresh {
		return
	}
	for v := int64(0); v < vals; v++ {
		switch {
		case v == ch.Value:
		case v == 0:
			// Next after the injected ones: a node explores a
			// transition's variants one after another.
			x.tag(i, q)
			if k := slices.Index(n.tagged, q); k > 0 {
				n.tagged = slices.Insert(slices.Delete(slices.Clone(n.tagged), k, k+1), 0, q)
			}
		default:
			x.inject(i, q, v)
		}
	}
}

// tagChoice tags c at node i: its thread, or its value injected.
func (x *Explorer) tagChoice(i int, c record.Choice) {
	if c.Value == 0 {
		x.tag(i, c.Thread)
	} else {
		x.inject(i, c.Thread, c.Value)
	}
}
