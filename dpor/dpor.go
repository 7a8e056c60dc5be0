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

func (*dporStrategy) Bound(r int) (int, bool)      { return onlyRound0(r) }
func (*dporStrategy) Reached(*Explorer, int)       {}
func (*dporStrategy) Pick(*Explorer) record.Choice { return record.Choice{} }
func (d *dporStrategy) Skip(x *Explorer, i int, c record.Choice) bool {
	return d.sleepSets && x.sleeping(i, c)
}

// Branch tags, for each conflict of the new interleaving not ordered by
// happens-before, the alternative that reverses it (tagPair).
func (d *dporStrategy) Branch(x *Explorer, br *Branch) error {
	races := x.an.racesFrom(x.lastDiv)
	if d.allPairs {
		races = br.NewPairs
	}
	for _, p := range races {
		x.noteRace(p[0], p[1])
		x.tagPair(x.lockRace(p[0], p[1]), p[1])
		x.rsNext = nil
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
	x.tagLockWaits(len(x.trs))
	return x.probe()
}

// tagLockWaits: a thread that cannot run because its next step locks a
// mutex another thread took (record.LockWaiter) never ran that lock on
// this branch, so no conflict shows the race between the two
// acquisitions: run it first at the node of the acquisition (among the
// branch's first n transitions). The machine is at the state to ask.
func (x *Explorer) tagLockWaits(n int) {
	lw, ok := x.m.(record.LockWaiter)
	if !ok {
		return
	}
	seen := map[record.TID]bool{}
	for _, tr := range x.trs {
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
			if l, ok := lockTaken(x.trs[k], true); ok && l == m && x.trs[k].Thread != p {
				if contains(x.nodes[k].runnable, p) {
					x.tag(k, p)
				} else {
					for _, q := range x.nodes[k].runnable {
						if q != x.trs[k].Thread {
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
		x.tagLockWaits(n) // p may have stopped at a lock
		x.an.truncate(n)
		x.trs = x.trs[:n]
	}
	return nil
}

// tagPair applies the thesis's tagging rule to the conflict (i, j). When
// j's thread was at its _xbegin at i and took an injected abort on the
// way to j, the reversal runs that abort at i. A conflict abort is not
// moved: it must follow the access that causes it, and the orders of the
// transaction itself are the reversals of the branch where it ran (where
// its CONFLICT was injected).
func (x *Explorer) tagPair(i, j int) {
	n := &x.nodes[i]
	p := x.trs[j].Thread
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
	x.rsNext = nil // a retry set is for p's tag only
	for _, q := range n.runnable {
		if q != x.trs[i].Thread {
			x.tag(i, q)
		}
	}
}

// sleeping is the sleep-set check (equiv_already_explored): c's thread
// q's next transition from node i is t_n, made by the same choice c (the
// same _xbegin result); if some ancestor k < i already explored c and
// every transition from k to i is independent of t_n, then running c at
// i is equivalent to a subtree already tested.
func (x *Explorer) sleeping(i int, c record.Choice) bool {
	q := c.Thread
	n := -1
	for k := i; k < len(x.trs); k++ {
		if x.trs[k].Thread == q {
			n = k
			break
		}
	}
	var value int64
	if n >= 0 && n < len(x.choices) {
		value = x.choices[n].Value
	}
	if n < 0 || value != c.Value {
		return false // t_n is not what c runs
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
		if x.nodes[k].tried(c) {
			return true
		}
	}
	return false
}
