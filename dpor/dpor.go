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
	register("dpor", "dynamic partial-order reduction with sleep sets (what the default falls back to where optimal DPOR is not exact)", true, func(s Spec) (Strategy, error) {
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
func (p *dporNode) advance(x Path, i int) {
	if p.cur != nil && (!p.curNarrow || x.retryDone(i, p.cur.thread)) {
		p.done = append(p.done, *p.cur)
	}
	ev := eventAt(x, i)
	p.cur, p.curNarrow = &ev, x.node(i).narrowed
}

func (*dporStrategy) stopsAtSelfAborts()      {}
func (*dporStrategy) Bound(r int) (int, bool) { return onlyRound0(r) }
func (*dporStrategy) Pick(Path) record.Choice { return record.Choice{} }

// Reached sets up node i's sleep set: the transitions asleep at its
// parent or run there by the children explored before this one, each as
// it ran from there, that commute with the transition into node i.
// (Landslide's own check, equiv_already_explored, compares the thread's
// transition later on the branch instead, after the transition the tag
// reorders, which may differ from the one it runs where it is tagged: it
// can leave final states out. It stays as Spec.LandslideSleepSets, to
// reproduce the thesis's figures.)
func (d *dporStrategy) Reached(x Path, i int) {
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
func (d *dporStrategy) Skip(x Path, i int, c record.Choice) bool {
	if d.landslideSleep {
		return sleeping(x, i, c)
	}
	if !d.sleepSets || i >= len(d.nodes) {
		return false
	}
	return slices.ContainsFunc(d.nodes[i].sleep, func(e event) bool { return e.choice() == c })
}

// Branch tags, for each race of the new interleaving, the alternative
// that reverses it (tagRace; tagPair with Spec.LandslideSleepSets), and
// notes the branch's last transition in its node's sleep-set state.
func (d *dporStrategy) Branch(x Path, br *Branch) error {
	trs := x.transitions()
	an := x.analysis()
	if d.sleepSets {
		d.nodes = d.nodes[:x.depth()] // a branch that ended at once pushed no node
		if n := len(trs); n > 0 && n == x.depth() {
			// The last transition pushed no node: note it as its
			// node's current child.
			d.nodes[n-1].advance(x, n-1)
		}
	}
	races := an.racesFrom(x.divergence())
	if d.allPairs {
		races = br.NewPairs
	}
	for _, p := range races {
		x.noteRace(p[0], p[1])
		if i := lockRace(x, p[0], p[1]); d.landslideSleep {
			tagPair(x, i, p[1]) // the thesis's rule
		} else {
			d.tagRace(x, i, p[1])
		}
		x.endRace()
	}
	x.injectConflicts(br.NewPairs)
	for _, p := range an.disabledFrom(x.divergence()) {
		tagPair(x, p[0], p[1])
	}
	if br.Bug != nil && x.depth() == len(trs) {
		// A failure disables every other thread: the failing
		// transition is dependent with each earlier transition of
		// another thread that does not happen before it (the state
		// at the failure differs by which of them ran).
		j := len(trs) - 1
		an.failing = j
		for i := 0; i < j; i++ {
			if trs[i].Thread != trs[j].Thread && !an.hb(i, j) {
				tagPair(x, i, j)
			}
		}
	}
	tagDisabled(x)
	tagLockWaits(x, len(trs))
	return x.probe()
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
func (d *dporStrategy) tagRace(x Path, i, j int) {
	trs := x.transitions()
	an := x.analysis()
	var v []int
	for k := i + 1; k < j; k++ {
		if !an.happensAfter(i, k) {
			v = append(v, k)
		}
	}
	v = append(v, j)
	var inits []record.TID
	for a, k := range v {
		q := trs[k].Thread
		if contains(inits, q) || slices.ContainsFunc(v[:a], func(m int) bool { return trs[m].Thread == q || an.happensAfter(m, k) }) {
			continue
		}
		inits = append(inits, q)
	}
	p := trs[j].Thread
	n := x.node(i)
	if contains(inits, p) || !slices.ContainsFunc(inits, func(q record.TID) bool { return contains(n.runnable, q) }) {
		if contains(inits, p) {
			d.wakeChanged(x, i, j)
		}
		tagPair(x, i, j)
		return
	}
	for _, q := range inits {
		if x.ranOrTagged(i, q) {
			return
		}
	}
	for _, q := range inits {
		if contains(n.runnable, q) && !d.Skip(x, i, record.Choice{Thread: q}) {
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
func (d *dporStrategy) wakeChanged(x Path, i, j int) {
	an := x.analysis()
	if !d.sleepSets || i >= len(d.nodes) || x.choiceValue(j) != 0 {
		return
	}
	p := x.transitions()[j].Thread
	n := &d.nodes[i]
	wider := func(e event) bool {
		return e.choice() == record.Choice{Thread: p} && !keysWithin(e.keys, an.keys[j])
	}
	// The sleep set first: most races find no such entry. Then j must
	// be p's first transition from i (p ran nothing in between).
	if !slices.ContainsFunc(n.sleep, wider) || int(an.prev[j]) > i || !mayRunOtherwise(x, i, j) {
		return
	}
	n.sleep = slices.DeleteFunc(slices.Clone(n.sleep), wider)
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
