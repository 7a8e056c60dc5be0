package dpor

import (
	"cmp"
	"fmt"
	"slices"

	"landslide/record"
)

// Race-reversal walks (beyond the thesis; bug finding, never a
// verification). Walk 1 runs the machine's default schedule (a thread
// runs until it blocks, yields or ends): the base. Every pair of its
// transitions (i, j), i < j, of different threads, that touch a common
// byte, one of them writing it, and are not ordered by program order or
// by one enabling the other (the thesis's pairs: memory conflicts not
// ordered by →S, however far apart) gives a candidate: at node i, run
// T(tj) instead, if it can run there. Candidates are (node, thread),
// each once: first, at each node, one of the threads that stand at the
// same place (reversalCandidates), then the others, each pass in the
// order of the node, then of the thread. Walk w >= 2 runs candidate
// Spec.Seed+w-2 (counted from 0): the base's choices up to its node, the
// candidate's thread there, then the default schedule.
// Each walk so deviates from the base once, and the walks go from the
// top of the base down: a bug that needs one thread to overtake another
// early, however many threads there are, comes first, where depth-first
// DPOR reaches it last and PCT with probability about 1/(threads·steps)
// (SCTBench's twostage_100: one reader must read between the first of
// 99 writers' two critical sections and any writer's second).
//
// The walks end with the candidates: the exploration then stops with
// Restricted set (StopRestricted), as it left every other switch out.
// Where the chosen thread is stopped at an _xbegin, its transaction
// starts (as the default schedule's does); a nondet call takes its first
// value. The base and its candidates are the strategy's state, kept in
// the Frontier, so a resumed exploration goes on with the same walks.
func init() {
	registerInfo(StrategyInfo{Name: "reversal", Doc: "race-reversal walks (--seed k: start at candidate k): the default schedule, then for each pair of its conflicting accesses of two threads, the second's thread run before the first, one walk each, top first; not a verification", Restricted: true,
		new: func(s Spec) (Strategy, error) {
			if err := onlyParams(s, "reversal", "seed"); err != nil {
				return nil, err
			}
			return &reversalStrategy{start: s.Seed}, nil
		}})
}

// ReversalCandidate is one walk of the reversal strategy: at node Node of
// the base, thread Thread runs.
type ReversalCandidate struct {
	Node   int        `msgpack:"n"`
	Thread record.TID `msgpack:"t"`
}

// ReversalState is the reversal strategy's state in a Frontier: the
// base's choices and the candidates.
type ReversalState struct {
	Base       []record.Choice     `msgpack:"base"`
	Candidates []ReversalCandidate `msgpack:"cands"`
}

type reversalStrategy struct {
	start uint64
	st    *ReversalState // nil until the base has run
}

func (*reversalStrategy) Bound(r int) (int, bool) { return onlyRound0(r) }

// allValues: a walk never branches, so a nondet call takes its first
// value.
func (*reversalStrategy) allValues(Path, int, record.Choice) bool { return false }

// Skip refuses every abort the explorer would inject: the walks run the
// default schedule's transactions.
func (*reversalStrategy) Skip(_ Path, _ int, c record.Choice) bool { return walkSkip(c) }

func (*reversalStrategy) Reached(Path, int) {}

// candidate is walk w's candidate (w >= 2), false past the last.
func (r *reversalStrategy) candidate(w int) (ReversalCandidate, bool) {
	k := r.start + uint64(w-2)
	if r.st == nil || k >= uint64(len(r.st.Candidates)) {
		return ReversalCandidate{}, false
	}
	return r.st.Candidates[k], true
}

// Branch takes the base's candidates after walk 1, and starts the next
// walk from the root, or ends the walks.
func (r *reversalStrategy) Branch(x Path, _ *Branch) error {
	if r.st == nil {
		r.st = &ReversalState{Base: slices.Clone(x.branchChoices()), Candidates: reversalCandidates(x)}
	}
	c, ok := r.candidate(x.executions() + 1)
	if !ok {
		x.restrict()
		return nil
	}
	t := r.st.Base[0].Thread
	if c.Node == 0 {
		t = c.Thread
	}
	x.newWalk(t)
	return nil
}

// reversalCandidates lists the base's candidates (the path is the base):
// first, of the threads that stand at the same place at a node (the
// stack where the thread's last transition before the node ended, or
// for a thread yet to run, where its first one ends), the first one
// only; then the others, each list by node, then thread. Threads at the
// same place usually run the same code (the 99 writers of twostage_100),
// so the first pass tries every different thing early; the second keeps
// the walks' coverage of the candidates whole.
func reversalCandidates(x Path) []ReversalCandidate {
	trs := x.transitions()
	pos := map[record.TID][]int{} // per thread, its transitions in order
	for k, tr := range trs {
		pos[tr.Thread] = append(pos[tr.Thread], k)
	}
	place := func(i int, t record.TID) string {
		ks := pos[t]
		n, _ := slices.BinarySearch(ks, i)
		k, fresh := 0, n == 0
		if fresh {
			k = ks[0]
		} else {
			k = ks[n-1]
		}
		return fmt.Sprint(fresh, trs[k].Stack)
	}
	type cand struct {
		ReversalCandidate
		dup bool
	}
	var all []cand
	for _, p := range x.analysis().pairsFrom(0) {
		i, j := p[0], p[1]
		t := trs[j].Thread
		if t == trs[i].Thread || !slices.Contains(x.node(i).runnable, t) {
			continue
		}
		all = append(all, cand{ReversalCandidate: ReversalCandidate{Node: i, Thread: t}})
	}
	slices.SortFunc(all, func(a, b cand) int { return cmpCandidate(a.ReversalCandidate, b.ReversalCandidate) })
	all = slices.CompactFunc(all, func(a, b cand) bool { return a.ReversalCandidate == b.ReversalCandidate })
	seen := map[string]bool{}
	for k := range all {
		c := &all[k]
		key := fmt.Sprint(c.Node, " ", place(c.Node, c.Thread))
		c.dup = seen[key]
		seen[key] = true
	}
	out := make([]ReversalCandidate, 0, len(all))
	for _, dup := range []bool{false, true} {
		for _, c := range all {
			if c.dup == dup {
				out = append(out, c.ReversalCandidate)
			}
		}
	}
	return out
}

func cmpCandidate(a, b ReversalCandidate) int {
	return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Thread, b.Thread))
}

// Pick follows the base up to the walk's candidate, runs its thread
// there, and the default schedule after it (walk 1: the default
// throughout).
func (r *reversalStrategy) Pick(x Path) record.Choice {
	i := x.depth() - 1
	c, ok := r.candidate(x.executions() + 1)
	switch {
	case !ok || i > c.Node:
		return record.Choice{}
	case i == c.Node:
		return record.Choice{Thread: c.Thread}
	}
	return r.st.Base[i]
}

func (r *reversalStrategy) save(f *Frontier) {
	if r.st != nil {
		f.Reversal = &ReversalState{Base: slices.Clone(r.st.Base), Candidates: slices.Clone(r.st.Candidates)}
	}
}

func (r *reversalStrategy) load(f *Frontier) error {
	s := f.Reversal
	if s == nil {
		if f.Executed > 0 {
			return fmt.Errorf("%w: a reversal exploration without its base", ErrFrontier)
		}
		return nil
	}
	for _, c := range s.Candidates {
		if c.Node < 0 || c.Node >= len(s.Base) || c.Thread == 0 || s.Base[c.Node].Thread == c.Thread {
			return fmt.Errorf("%w: reversal candidate (%d, %d) for a base of %d choices", ErrFrontier, c.Node, c.Thread, len(s.Base))
		}
	}
	if len(s.Base) == 0 {
		return fmt.Errorf("%w: reversal state without a base", ErrFrontier)
	}
	r.st = &ReversalState{Base: slices.Clone(s.Base), Candidates: slices.Clone(s.Candidates)}
	return nil
}
