package dpor

import (
	"errors"
	"fmt"

	"landslide/record"
)

// The default strategy: dynamic partial-order reduction as Landslide does
// it (thesis §3.4.2, §3.4.5), with the sleep-set refinement unless
// Spec.NoSleepSets, reversing the direct races (or, with Spec.AllPairs,
// every conflicting pair as the thesis does).
func init() {
	register("dpor", "dynamic partial-order reduction with sleep sets (the default)", true, func(s Spec) (Strategy, error) {
		if err := onlyParams(s, "dpor", "sleep-sets", "all-pairs"); err != nil {
			return nil, err
		}
		return &dporStrategy{sleepSets: !s.NoSleepSets, allPairs: s.AllPairs}, nil
	})
}

type dporStrategy struct {
	sleepSets, allPairs bool
}

func (*dporStrategy) Bound(r int) (int, bool)   { return onlyRound0(r) }
func (*dporStrategy) Reached(*Explorer, int)    {}
func (*dporStrategy) Pick(*Explorer) record.TID { return 0 }
func (d *dporStrategy) Skip(x *Explorer, i int, q record.TID) bool {
	return d.sleepSets && x.sleeping(i, q)
}

// Branch tags, for each conflict of the new interleaving not ordered by
// happens-before, the alternative that reverses it (tagPair).
func (d *dporStrategy) Branch(x *Explorer, br *Branch) error {
	races := x.an.racesFrom(x.lastDiv)
	if d.allPairs {
		races = br.NewPairs
	}
	for _, p := range races {
		x.tagPair(p[0], p[1])
	}
	x.injectConflicts(br.NewPairs)
	for _, p := range x.an.disabledFrom(x.lastDiv) {
		x.tagPair(p[0], p[1])
	}
	if br.Bug != nil && len(x.nodes) == len(x.trs) {
		// A failure disables every other thread: the failing
		// transition is dependent with each earlier transition of
		// another thread that does not happen before it (the state
		// at the failure differs by which of them ran).
		j := len(x.trs) - 1
		x.an.failing = j
		for i := 0; i < j; i++ {
			if x.trs[i].Thread != x.trs[j].Thread && !x.an.hb(i, j) {
				x.tagPair(i, j)
			}
		}
	}
	x.tagDisabled()
	return x.probe()
}

// tagDisabled: a transition that disabled a runnable thread which then
// never ran again on this branch is a race that no later transition of
// that thread reveals; reorder them (the thread runs first at that node).
func (x *Explorer) tagDisabled() {
	for i := range x.trs {
		if i >= len(x.an.flips) {
			break
		}
		for _, u := range x.an.flips[i] {
			if !contains(x.an.before[i], u) {
				continue // enabled, not disabled
			}
			ranLater := false
			for k := i + 1; k < len(x.trs); k++ {
				if x.trs[k].Thread == u {
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

// probe handles the threads the end of the execution cut off. When the
// last transition ended the program (a bug, or an exit while other threads
// could still run), what those threads would have done never ran, so no
// conflict can involve it. Flanagan and Godefroid consider the next
// transition of every enabled thread; since a failure also hides the
// threads' later transitions, probe each thread's whole remaining run
// alone, from the node before the last transition, tag its conflicts with
// the branch, and drop it. (Landslide stops at the first bug, where this
// matters less; exploring past bugs and programs that exit with threads
// still running need it.)
func (x *Explorer) probe() error {
	n := len(x.trs)
	if n == 0 || len(x.nodes) != n {
		return nil // a loop bug or budget cut the branch while running on
	}
	last := &x.nodes[n-1]
	var others []record.TID
	for _, p := range last.runnable {
		if p != x.trs[n-1].Thread {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		return nil
	}
	// Ending the program disabled them: the last transition is dependent
	// with each one's next (thesis §3.4.2, "enabled_by").
	for _, p := range others {
		x.tag(n-1, p)
	}
	end := x.m.Snapshot() // the caller's OnBranch looks at the end state
	defer x.m.Restore(end)
	lastSnap, err := x.snapAt(n - 1)
	if err != nil {
		return err
	}
	for _, p := range others {
		x.m.Restore(lastSnap)
		for k := 0; k < maxProbe; k++ {
			if done, _ := x.m.Ended(); done || !contains(x.m.Runnable(), p) {
				break
			}
			tr, err := x.m.Step(record.Choice{Thread: p})
			if err != nil && !errors.Is(err, record.ErrBudget) {
				return fmt.Errorf("dpor: probing thread %d: %w", p, err)
			}
			j := len(x.trs)
			x.trs = append(x.trs, tr)
			x.an.add(tr, last.runnable)
			for _, i := range append(x.an.conf[j], x.an.dis[j]...) {
				if int(i) < n {
					x.tagPair(int(i), j)
				}
			}
			if err != nil {
				break
			}
		}
		x.an.truncate(n)
		x.trs = x.trs[:n]
	}
	return nil
}

// tagPair applies the thesis's tagging rule to the conflict (i, j).
func (x *Explorer) tagPair(i, j int) {
	n := &x.nodes[i]
	p := x.trs[j].Thread
	if contains(n.runnable, p) {
		x.tag(i, p)
		return
	}
	for _, q := range n.runnable {
		if q != x.trs[i].Thread {
			x.tag(i, q)
		}
	}
}

// sleeping is the sleep-set check (equiv_already_explored): q's next
// transition from node i is t_n; if some ancestor k < i already explored q
// and every transition from k to i is independent of t_n, then running q
// at i is equivalent to a subtree already tested.
func (x *Explorer) sleeping(i int, q record.TID) bool {
	n := -1
	for k := i; k < len(x.trs); k++ {
		if x.trs[k].Thread == q {
			n = k
			break
		}
	}
	if n < 0 || (n < len(x.choices) && x.choices[n].Value != 0) {
		return false // (an injected abort is not the child explored at k)
	}
	// t_n must be what q would run at i: nothing between (other than t_i,
	// the transition the tag reorders) may affect it.
	for m := i + 1; m < n; m++ {
		if x.an.dependent(m, n) {
			return false
		}
	}
	for k := i - 1; k >= 0; k-- {
		if x.trs[k].Thread == q || x.an.dependent(k, n) {
			return false
		}
		if contains(x.nodes[k].explored, q) {
			return true
		}
	}
	return false
}
