package dpor

import (
	"fmt"

	"landslide/record"
)

// Iterative context bounding (CHESS; thesis §3.4.5): all interleavings
// with at most 0 preemptions, then at most 1, ..., up to Spec.MaxBound or
// until a round drops no alternative. Within a bound every thread is
// scheduled at every PP where the bound allows it: the thesis prunes
// within the bound with DPOR and BPOR (Coons et al. 2013), but our
// implementation of that missed interleavings within the bound on random
// programs (TestICBBoundedSoundness), so each bound is explored completely
// instead, at the cost of less pruning, and without sleep sets (the
// explored sibling that proves a subtree redundant may itself have been
// cut by the bound).
func init() {
	registerInfo(StrategyInfo{Name: "icb", Doc: "iterative context bounding (CHESS): at most 0, 1, ... preemptions (--preemption-bound caps it)", Exhaustive: true, Bounded: true, new: func(s Spec) (Strategy, error) {
		if err := onlyParams(s, "icb", "max-bound"); err != nil {
			return nil, err
		}
		if s.MaxBound != nil && *s.MaxBound < 0 {
			return nil, fmt.Errorf("icb: preemption bound %d: want at least 0", *s.MaxBound)
		}
		return icbStrategy{max: s.MaxBound}, nil
	}})
}

type icbStrategy struct{ max *int }

func (s icbStrategy) Bound(r int) (int, bool) { return boundedRound(s.max, r) }
func (icbStrategy) Reached(x Path, i int)     { x.tagAll(i) }
func (icbStrategy) Pick(Path) record.Choice   { return record.Choice{} }
func (icbStrategy) Branch(x Path, br *Branch) error {
	x.injectConflicts(br.NewPairs) // as full enumeration does
	return nil
}
func (icbStrategy) Skip(Path, int, record.Choice) bool { return false }

// CHESS-atomic (the CB-DPOR thesis's §2.3, §6.1.1; CHESS as first
// described): iterative context bounding that preempts a thread only
// before an atomic instruction (an LR, SC or AMO, or a load or store of a
// C11 atomic), besides the implicit switch points where every switch is
// free (the start, a thread that ends, blocks or yields). With every
// shared access a PP (--every-access) those are the accesses it may
// switch at; it is faster than icb (CHESS) and misses the bugs that need
// a preemption elsewhere. Whether a thread's next step starts with an
// atomic access is known once it ran: the last thread goes on first at
// each node, and the node branches after the interleaving if its
// transition began with one. An exploration that skipped a switch point
// is not complete: it ends Bounded, Restricted (StopRestricted).
func init() {
	registerInfo(StrategyInfo{Name: "chess-atomic", Doc: "CHESS preempting only before atomic instructions: at most 0, 1, ... preemptions (--preemption-bound caps it); not a verification", Exhaustive: true, Restricted: true, Bounded: true,
		new: func(s Spec) (Strategy, error) {
			if err := onlyParams(s, "chess-atomic", "max-bound"); err != nil {
				return nil, err
			}
			if s.MaxBound != nil && *s.MaxBound < 0 {
				return nil, fmt.Errorf("chess-atomic: preemption bound %d: want at least 0", *s.MaxBound)
			}
			return chessAtomic{max: s.MaxBound}, nil
		}})
}

type chessAtomic struct{ max *int }

func (s chessAtomic) Bound(r int) (int, bool) { return boundedRound(s.max, r) }

// Reached: an implicit switch point branches on every thread.
func (chessAtomic) Reached(x Path, i int) {
	if implicitCSP(x.node(i)) {
		x.tagAll(i)
	}
}

// Pick: the last thread goes on (where it can, and did not yield).
func (chessAtomic) Pick(x Path) record.Choice {
	if n := x.node(x.depth() - 1); !implicitCSP(n) {
		return record.Choice{Thread: n.prev}
	}
	return record.Choice{}
}

// Branch: a node where the last thread went on with an atomic access
// branches on every thread; one where it went on otherwise, with another
// thread able to run, is a switch point left out.
func (chessAtomic) Branch(x Path, br *Branch) error {
	trs := x.transitions()
	x.injectConflicts(br.NewPairs) // as full enumeration does
	for i := x.divergence(); i < len(trs) && i < x.depth(); i++ {
		n := x.node(i)
		if implicitCSP(n) || trs[i].Thread != n.prev {
			continue
		}
		if acc := trs[i].Accesses; len(acc) > 0 && acc[0].Atomic {
			x.tagAll(i)
		} else if len(n.runnable) > 1 {
			x.restrict()
		}
	}
	return nil
}

func (chessAtomic) Skip(Path, int, record.Choice) bool { return false }
