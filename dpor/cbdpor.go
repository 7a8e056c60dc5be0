package dpor

import (
	"fmt"
	"slices"

	"landslide/record"
)

// CB-DPOR: context-bounded dynamic partial-order reduction with
// preemption-only sleep sets (van den Hooff, MEng thesis, MIT 2014,
// Fig 3-2; digest "cbdpor-lineup.md" §2.1–2.3 and §8 items 1–6).
//
// Rounds bound the preemptions at 0, 1, 2, ... (up to Spec.MaxBound, or
// until a round drops no alternative), each round a search from scratch.
// Within a round:
//   - Context switch points (CSPs). A node is an implicit CSP when every
//     switch there is free: the root, and wherever the thread that ran
//     last can no longer run (it ended or blocked) or stopped at a
//     voluntary switch (a yield: Landslide counts no preemption there,
//     node.cost). An implicit CSP branches on every runnable thread not
//     asleep. Anywhere else the last thread goes on (the non-preemptive
//     default schedule), and the node becomes an explicit CSP only when
//     a later transition marks it.
//   - Marks (ConsiderPreemptions). After each interleaving, for every new
//     transition j and every earlier transition i of another thread it
//     depends on (a memory conflict, a disabling, or the failure of j),
//     if the previous transition of j's thread does not happen after i
//     (the vector clocks over every dependency), the node before i is
//     marked: every dependent, reversible pair, not only the last one as
//     in DPOR. Already-ordered conflicts leave no mark, and a mark on an
//     implicit CSP is ignored (it branches on everything already).
//   - A marked node branches on every runnable thread not asleep, each
//     alternative costing one preemption: the path drops those beyond the
//     round's bound (and starts the next round).
//   - Sleep sets, preemption-only. Only the preempted thread goes to
//     sleep, and only at an explicit CSP: below an alternative T of a
//     marked node whose last thread l went on first, l sleeps with the
//     transition it ran there, until a transition dependent with that one
//     runs. Nothing is put to sleep at an implicit CSP, nor are explored
//     siblings (the thesis: putting a thread to sleep there could need an
//     extra preemption to reach what it hides, §3.2). A sleeping thread is
//     never run; a node where every runnable thread sleeps ends its
//     execution as sleep-set blocked (Result.SleepBlocked).
//
// The safety nets of the dpor strategy for what a branch did not run (the
// disabled threads, lock waits, the threads an exit or failure cut off:
// probe) tag single threads as they do there; those tags pass through
// the bound and the sleep sets like the marks' alternatives.
func init() {
	registerInfo(StrategyInfo{Name: "cbdpor", Doc: "context-bounded DPOR (CB-DPOR, van den Hooff 2014): at most 0, 1, ... preemptions, preemption-only sleep sets (--preemption-bound caps it)", Exhaustive: true, Bounded: true, new: func(s Spec) (Strategy, error) {
		if err := onlyParams(s, "cbdpor", "max-bound"); err != nil {
			return nil, err
		}
		if s.MaxBound != nil && *s.MaxBound < 0 {
			return nil, fmt.Errorf("cbdpor: preemption bound %d: want at least 0", *s.MaxBound)
		}
		if s.RetrySets {
			return nil, fmt.Errorf("retry sets are a reduction of the dpor strategy: not with CB-DPOR")
		}
		if s.AbortCodes {
			return nil, errNoConflictAborts("CB-DPOR")
		}
		return &cbStrategy{max: s.MaxBound}, nil
	}})
}

// cbNode is CB-DPOR's state at one node of the path.
type cbNode struct {
	sleep []event // the threads asleep here, each with the transition it would run
	// lev is the last thread's transition from here (its child is
	// explored first): what it sleeps with below the alternatives.
	lev    *event
	marked bool // a later transition marked the node (statistics and tests)
}

type cbStrategy struct {
	max   *int
	nodes []cbNode
}

// Bound: round r allows r preemptions.
func (s *cbStrategy) Bound(r int) (int, bool) { return boundedRound(s.max, r) }

// boundedRound is the Bound of the iteratively bounded strategies.
func boundedRound(max *int, r int) (int, bool) {
	if max != nil && r > *max {
		return 0, false
	}
	return r, true
}

// implicitCSP reports whether node n branches on every thread for free:
// the root, or the last thread cannot go on or switched voluntarily.
func implicitCSP(n *node) bool {
	return n.prev == 0 || n.voluntary || !contains(n.runnable, n.prev)
}

// Reached sets up node i: its sleep set is its parent's sleepers, plus
// the parent's last thread if the parent preempted it here, less those
// the transition into node i wakes. An implicit CSP tags every thread.
func (s *cbStrategy) Reached(x Path, i int) {
	if i == 0 {
		s.nodes = append(s.nodes[:0], cbNode{})
	} else {
		s.nodes = s.nodes[:i]
		p, pn := &s.nodes[i-1], x.node(i-1)
		ev := eventAt(x, i-1)
		sleepers := p.sleep
		if !implicitCSP(pn) {
			switch {
			case ev.thread == pn.prev && p.lev == nil:
				e := ev
				p.lev = &e
			case ev.thread != pn.prev && p.lev != nil:
				sleepers = append(slices.Clip(sleepers), *p.lev) // preempted: asleep
			}
		}
		var sleep []event
		for _, q := range sleepers {
			if !q.dependent(&ev) {
				sleep = append(sleep, q)
			}
		}
		s.nodes = append(s.nodes, cbNode{sleep: sleep})
	}
	if implicitCSP(x.node(i)) {
		x.tagAll(i) // asleep ones are refused by Skip
	}
}

// Pick: the last thread goes on, except at an implicit CSP, where the
// machine's default thread runs unless it is asleep, then the first
// thread awake; with every runnable thread asleep the execution is
// sleep-set blocked.
func (s *cbStrategy) Pick(x Path) record.Choice {
	i := x.depth() - 1
	n := x.node(i)
	if !implicitCSP(n) {
		return record.Choice{Thread: n.prev}
	}
	if d := x.machine().Default().Thread; d != 0 && !s.asleep(i, record.Choice{Thread: d}) {
		return record.Choice{Thread: d}
	}
	for _, q := range n.runnable {
		if c := (record.Choice{Thread: q}); !s.asleep(i, c) {
			return c
		}
	}
	return record.Choice{Thread: abandon}
}

func (s *cbStrategy) asleep(i int, c record.Choice) bool {
	return slices.ContainsFunc(s.nodes[i].sleep, func(e event) bool { return e.choice() == c })
}

// Skip refuses a choice asleep at the node.
func (s *cbStrategy) Skip(x Path, i int, c record.Choice) bool {
	return i < len(s.nodes) && s.asleep(i, c)
}

// Branch marks, for each new transition, the node before every earlier
// transition it depends on and could be reordered with (Fig 3-2's
// ConsiderPreemptions), then applies the path's safety nets.
func (s *cbStrategy) Branch(x Path, br *Branch) error {
	trs := x.transitions()
	an := x.analysis()
	s.nodes = s.nodes[:x.depth()] // a branch that ended at once pushed no node
	n := len(trs)
	if n == x.depth() {
		// The branch ended after the last node's transition: note it as
		// that node's child (its last thread's transition, if it is).
		ln := x.node(n - 1)
		if p := &s.nodes[n-1]; !implicitCSP(ln) && trs[n-1].Thread == ln.prev && p.lev == nil {
			e := eventAt(x, n-1)
			p.lev = &e
		}
	}
	failing := -1
	if br.Bug != nil && n == x.depth() {
		// A failure ends every other thread: it depends on each earlier
		// transition of another thread (see dporStrategy.Branch).
		failing = n - 1
		an.failing = failing
	}
	for j := x.divergence(); j < n; j++ {
		p := int(an.prev[j])
		consider := func(i int) {
			if trs[i].Thread != trs[j].Thread && (p < 0 || !an.happensAfter(i, p)) {
				s.mark(x, i)
			}
		}
		for _, i := range an.deps[j] {
			consider(int(i))
		}
		for _, i := range an.dis[j] {
			consider(int(i))
		}
		if j == failing {
			for i := 0; i < j; i++ {
				consider(i)
			}
		}
	}
	tagDisabled(x)
	tagLockWaits(x, n)
	return x.probe()
}

// mark makes node i an explicit CSP: every runnable thread is tagged
// there (the path refuses those explored, asleep or over the bound).
func (s *cbStrategy) mark(x Path, i int) {
	if implicitCSP(x.node(i)) {
		return // it branches on everything already
	}
	s.nodes[i].marked = true
	x.tagAll(i)
}

// CBNode is CB-DPOR's state at one node, in a Frontier.
type CBNode struct {
	Sleep  []FrontierEvent `msgpack:",omitempty"`
	Last   *FrontierEvent  `msgpack:",omitempty"`
	Marked bool            `msgpack:",omitempty"`
}

func (s *cbStrategy) save(f *Frontier) {
	f.CBDPOR = make([]CBNode, len(s.nodes))
	for i, n := range s.nodes {
		f.CBDPOR[i].Sleep = saveEvents(n.sleep)
		f.CBDPOR[i].Last = saveEventPtr(n.lev)
		f.CBDPOR[i].Marked = n.marked
	}
}

func (s *cbStrategy) load(f *Frontier) error {
	if len(f.CBDPOR) != len(f.Nodes) {
		return fmt.Errorf("%w: CB-DPOR state for %d nodes, the path has %d", ErrFrontier, len(f.CBDPOR), len(f.Nodes))
	}
	s.nodes = make([]cbNode, len(f.CBDPOR))
	for i, fn := range f.CBDPOR {
		n := &s.nodes[i]
		var err error
		if n.sleep, err = loadEvents(fn.Sleep); err != nil {
			return err
		}
		if n.lev, err = loadEventPtr(fn.Last); err != nil {
			return err
		}
		n.marked = fn.Marked
	}
	return nil
}
