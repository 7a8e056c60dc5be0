package dpor

import (
	"errors"
	"fmt"
	"slices"

	"landslide/record"
)

// The default strategy: dynamic partial-order reduction as Landslide does
// it (thesis §3.4.2, §3.4.5), reversing the direct races (or, with
// Spec.AllPairs, every conflicting pair as the thesis does) through a
// source-set initial (tagRace), with sleep sets unless Spec.NoSleepSets;
// Spec.LandslideSleepSets is the thesis's own rule and check.
func init() {
	register("dpor", "dynamic partial-order reduction with sleep sets (the default)", true, func(s Spec) (Strategy, error) {
		if err := onlyParams(s, "dpor", "sleep-sets", "all-pairs", "landslide-sleep-sets"); err != nil {
			return nil, err
		}
		if s.NoSleepSets && s.LandslideSleepSets {
			return nil, errors.New("dpor: --no-sleep-sets and Landslide's sleep-set check exclude each other")
		}
		return &dporStrategy{sleepSets: !s.NoSleepSets && !s.LandslideSleepSets, landslideSleep: s.LandslideSleepSets, allPairs: s.AllPairs}, nil
	})
}

type dporStrategy struct {
	sleepSets, allPairs bool
	// landslideSleep: Spec.LandslideSleepSets, the thesis's check
	// (sleeping) instead of the sleep sets.
	landslideSleep bool
	nodes          []dporNode
}

// dporNode is the dpor strategy's sleep-set state at one node of the path
// (Godefroid's sleep sets): the transitions asleep here, those of the
// children explored before the current one, and the current child's.
type dporNode struct {
	sleep []event
	done  []event
	cur   *event
	// curNarrow: the current child runs under a retry set narrower than
	// the node's constraints (node.narrowed): done, it puts its thread
	// to sleep nowhere, since its subtree holds only some of the results
	// of the thread's _xbegin passes.
	curNarrow bool
}

// advance notes the previous child's subtree at node i as done (a
// narrowed one counts once its thread's subtrees there are complete) and
// transition i, the branch's, as the current child.
func (p *dporNode) advance(x *Explorer, i int) {
	if p.cur != nil && (!p.curNarrow || x.retryDone(i, p.cur.thread)) {
		p.done = append(p.done, *p.cur)
	}
	ev := x.event(i)
	p.cur, p.curNarrow = &ev, x.nodes[i].narrowed
}

func (*dporStrategy) stopsAtSelfAborts()           {}
func (*dporStrategy) Bound(r int) (int, bool)      { return onlyRound0(r) }
func (*dporStrategy) Pick(*Explorer) record.Choice { return record.Choice{} }

// Reached sets up node i's sleep set: the transitions asleep at its
// parent or run there by the children explored before this one, each as
// it ran from there, that commute with the transition into node i.
// (Landslide's own check, equiv_already_explored, compares the thread's
// transition later on the branch instead, after the transition the tag
// reorders, which may differ from the one it runs where it is tagged: it
// can leave final states out. It stays as Spec.LandslideSleepSets, to
// reproduce the thesis's figures.)
func (d *dporStrategy) Reached(x *Explorer, i int) {
	if !d.sleepSets {
		return
	}
	if i == 0 {
		d.nodes = append(d.nodes[:0], dporNode{})
		return
	}
	d.nodes = d.nodes[:i]
	p := &d.nodes[i-1]
	p.advance(x, i-1)
	ev := *p.cur
	var sleep []event
	for _, set := range [][]event{p.sleep, p.done} {
		for _, e := range set {
			if !e.dependent(&ev) {
				sleep = append(sleep, e)
			}
		}
	}
	d.nodes = append(d.nodes, dporNode{sleep: sleep})
}

// Skip refuses a choice asleep at node i.
func (d *dporStrategy) Skip(x *Explorer, i int, c record.Choice) bool {
	if d.landslideSleep {
		return x.sleeping(i, c)
	}
	if !d.sleepSets || i >= len(d.nodes) {
		return false
	}
	return slices.ContainsFunc(d.nodes[i].sleep, func(e event) bool { return e.choice() == c })
}

// Branch tags, for each race of the new interleaving, the alternative
// that reverses it (tagRace; tagPair with Spec.LandslideSleepSets), and
// notes the branch's last transition in its node's sleep-set state.
func (d *dporStrategy) Branch(x *Explorer, br *Branch) error {
	if d.sleepSets {
		d.nodes = d.nodes[:len(x.nodes)] // a branch that ended at once pushed no node
		if n := len(x.trs); n > 0 && n == len(x.nodes) {
			// The last transition pushed no node: note it as its
			// node's current child.
			d.nodes[n-1].advance(x, n-1)
		}
	}
	races := x.an.racesFrom(x.lastDiv)
	if d.allPairs {
		races = br.NewPairs
	}
	for _, p := range races {
		x.noteRace(p[0], p[1])
		if i := x.lockRace(p[0], p[1]); d.landslideSleep {
			x.tagPair(i, p[1]) // the thesis's rule
		} else {
			d.tagRace(x, i, p[1])
		}
		x.race = race{}
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

// tagRace reverses the race (i, j) as source-set DPOR does (Abdulla,
// Aronis, Jonsson and Sagonas 2014, Algorithm 1). v is the transitions
// after i that do not happen after it, up to j, then j; its initials are
// the threads whose first transition in v happens after no other in v.
// When j's thread is one (j happens after none of them), this is the
// thesis's rule (tagPair). When it is not, j read what a transition of v
// wrote: running j's thread first at i would run another transition than
// j, so an initial runs first there instead, unless one already ran or is
// tagged there, or each is asleep (its subtree is covered). The thesis's
// rule alone, without a look at every thread's next transition at every
// node (Flanagan and Godefroid's next(s, p)), can leave final states out
// where what a step touches depends on the values it reads
// (TestStateDependentAccesses).
func (d *dporStrategy) tagRace(x *Explorer, i, j int) {
	var v []int
	for k := i + 1; k < j; k++ {
		if !x.an.happensAfter(i, k) {
			v = append(v, k)
		}
	}
	v = append(v, j)
	var inits []record.TID
	for a, k := range v {
		q := x.trs[k].Thread
		if contains(inits, q) || slices.ContainsFunc(v[:a], func(m int) bool { return x.trs[m].Thread == q || x.an.happensAfter(m, k) }) {
			continue
		}
		inits = append(inits, q)
	}
	p := x.trs[j].Thread
	n := &x.nodes[i]
	if contains(inits, p) || !slices.ContainsFunc(inits, func(q record.TID) bool { return contains(n.runnable, q) }) {
		if contains(inits, p) {
			d.wakeChanged(x, i, j)
		}
		x.tagPair(i, j)
		return
	}
	for _, q := range inits {
		if x.ranOrTagged(i, q) {
			return
		}
	}
	for _, q := range inits {
		if contains(n.runnable, q) && !x.strat.Skip(x, i, record.Choice{Thread: q}) {
			x.tag(i, q)
			return
		}
	}
}

// wakeChanged wakes j's thread p at node i, where the race (i, j) runs
// it first, if it is asleep there with a transition that touches memory
// j did not. What a transition touches can depend on what it reads (a
// transaction that aborts itself on a flag reads the flag only;
// committing, it also writes its data), and j read what i, or what
// happens after i, wrote. The branch reversed j's races, not those of
// p's transition at i: that transition races with steps j commutes
// with, and the sleeping transition's subtree reverses those races at
// its own nodes, never at i. Trusting the sleep set there left final
// states and Mazurkiewicz traces unexplored
// (TestSleepSetsWithChangedTransitions). Where the sleeping transition
// touches only what j touched (a compare-and-swap that failed there and
// succeeds here), the sleep set is trusted: no test has shown a miss
// there, and waking it would repeat every such race's subtree.
func (d *dporStrategy) wakeChanged(x *Explorer, i, j int) {
	if !d.sleepSets || i >= len(d.nodes) || x.choiceValue(j) != 0 {
		return
	}
	p := x.trs[j].Thread
	n := &d.nodes[i]
	wider := func(e event) bool {
		return e.choice() == record.Choice{Thread: p} && !keysWithin(e.keys, x.an.keys[j])
	}
	// The sleep set first: most races find no such entry. Then j must
	// be p's first transition from i (p ran nothing in between).
	if !slices.ContainsFunc(n.sleep, wider) || int(x.an.prev[j]) > i || !x.mayRunOtherwise(i, j) {
		return
	}
	n.sleep = slices.DeleteFunc(slices.Clone(n.sleep), wider)
}

// mayRunOtherwise reports whether transition j may do something else when
// run before transition i: it touched what i, or a transition between
// them that happens after i, wrote.
func (x *Explorer) mayRunOtherwise(i, j int) bool {
	if x.an.overwrites(i, j) {
		return true
	}
	for k := i + 1; k < j; k++ {
		if x.an.happensAfter(i, k) && x.an.overwrites(k, j) {
			return true
		}
	}
	return false
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
	for _, q := range n.runnable {
		if q != x.trs[i].Thread {
			x.tag(i, q)
		}
	}
}

// sleeping is Landslide's sleep-set check (equiv_already_explored), with
// Spec.LandslideSleepSets. Unsound where a transition's accesses depend on
// the values it reads (TestStateDependentAccesses): t_n, compared below,
// runs after t_i and may differ from what q runs at i. c's thread
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

// DPORNode is the dpor strategy's sleep-set state at one node, in a
// Frontier.
type DPORNode struct {
	Sleep []FrontierEvent `msgpack:",omitempty"`
	Done  []FrontierEvent `msgpack:",omitempty"`
	Cur   *FrontierEvent  `msgpack:",omitempty"`
	// CurNarrow: Cur runs under a narrower retry set (dporNode.curNarrow).
	CurNarrow bool `msgpack:",omitempty"`
}

func (d *dporStrategy) save(f *Frontier) {
	if !d.sleepSets {
		return
	}
	f.DPOR = make([]DPORNode, len(d.nodes))
	for i, n := range d.nodes {
		f.DPOR[i].Sleep = saveEvents(n.sleep)
		f.DPOR[i].Done = saveEvents(n.done)
		f.DPOR[i].Cur = saveEventPtr(n.cur)
		f.DPOR[i].CurNarrow = n.curNarrow
	}
}

// load restores the sleep sets. A frontier stored before the strategy
// kept them has none: the exploration goes on with empty ones, which
// prunes less but leaves nothing out.
func (d *dporStrategy) load(f *Frontier) error {
	if !d.sleepSets {
		return nil
	}
	if len(f.DPOR) == 0 {
		d.nodes = make([]dporNode, len(f.Nodes))
		return nil
	}
	if len(f.DPOR) != len(f.Nodes) {
		return fmt.Errorf("%w: DPOR sleep sets for %d nodes, the path has %d", ErrFrontier, len(f.DPOR), len(f.Nodes))
	}
	d.nodes = make([]dporNode, len(f.DPOR))
	for i, fn := range f.DPOR {
		n := &d.nodes[i]
		var err error
		if n.sleep, err = loadEvents(fn.Sleep); err != nil {
			return err
		}
		if n.done, err = loadEvents(fn.Done); err != nil {
			return err
		}
		if n.cur, err = loadEventPtr(fn.Cur); err != nil {
			return err
		}
		n.curNarrow = fn.CurNarrow
	}
	return nil
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
