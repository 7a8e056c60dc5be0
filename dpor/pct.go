package dpor

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"landslide/record"
)

// Default and largest PCT depth (Spec.Depth).
const (
	defaultPCTDepth = 3
	maxPCTDepth     = 64
)

// PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi,
// Nagarakatte, ASPLOS 2010), with depth d = Spec.Depth (default 3): each
// execution is an independent walk from the root that always runs the
// runnable thread of highest priority, where
//   - priorities: a thread gets its initial priority when it is first seen
//     runnable (the threads runnable at a node taken in TID order): it is
//     inserted at a uniformly random rank among the threads seen so far,
//     and the thread of rank r (0 for the lowest) has priority d+r. The
//     ranks of n threads are so a uniformly random permutation, the
//     paper's random assignment of d..d+n-1; a later thread shifts the
//     priorities above its rank by one, which keeps their order, all the
//     scheduler looks at;
//   - change points: d-1 distinct steps k_1..k_{d-1} drawn uniformly from
//     1..K (all of them if K < d-1), steps being the walk's transitions,
//     numbered from 1. The thread that runs step k_i gets priority i once
//     it has run it (below every initial priority), as in the paper;
//   - K is the rounded average depth of the walks so far (the explorer's
//     depthSum / executed, both in the Frontier); walk 1, with no average
//     yet, has no change points (it runs the threads in priority order).
//
// Walk w draws everything (the change points first, then the ranks as
// threads appear and the coins at _xbegin, below) from a PCG seeded with
// (Spec.Seed, w): it depends only on
// Seed, Depth, w and the walks before it, so the same Spec runs the same
// walks, and a resumed exploration goes on with those of the uninterrupted
// one. In a walk, only a change point (at most d-1 of them) or a thread of
// higher priority becoming runnable (created or woken) switches away from
// a thread that can still run. A bug of depth d (d ordering constraints
// suffice to hit it) is hit with probability at least 1/(n·K^(d-1)), n
// threads (the paper's bound, for walks of at most K steps). Nondet calls
// take their first value, as in a random walk; where the thread to run is
// stopped at an _xbegin, a fair coin decides whether its transaction
// starts or aborts with RETRY (step; the paper has no transactions, and
// the coin is no priority change). It never completes: a budget or an
// interleaving limit ends it.
func init() {
	register("pct", "probabilistic concurrency testing (--seed, --depth d): priority walks with d-1 random priority change points; never complete", false,
		func(s Spec) (Strategy, error) {
			if err := onlyParams(s, "pct", "seed", "depth"); err != nil {
				return nil, err
			}
			d := s.Depth
			if d == 0 {
				d = defaultPCTDepth
			}
			if d < 1 || d > maxPCTDepth {
				return nil, fmt.Errorf("pct: depth %d: want 1 to %d", s.Depth, maxPCTDepth)
			}
			return &pctStrategy{seed: s.Seed, depth: d}, nil
		})
}

type pctStrategy struct {
	seed  uint64
	depth int
	// The walk the state below is for (0: none yet), and its draws.
	walk int
	rng  *rand.Rand
	// order holds the threads seen in the walk by initial priority, lowest
	// first; low the threads a change point lowered, with their priority.
	order []record.TID
	low   []pctLow
	// change[i-1] is k_i: the step whose thread then gets priority i.
	change []int
}

type pctLow struct {
	t    record.TID
	prio int
}

func (*pctStrategy) Bound(r int) (int, bool) { return onlyRound0(r) }

// allValues: a walk never branches, so a nondet call takes its first
// value, as in a random walk.
func (*pctStrategy) allValues(Path, int, record.Choice) bool { return false }

// Skip refuses every abort the explorer would inject: a walk draws its
// own (walkSkip, step).
func (*pctStrategy) Skip(_ Path, _ int, c record.Choice) bool { return walkSkip(c) }

// Reached: the first walk chooses its root's thread in Pick.
func (p *pctStrategy) Reached(x Path, i int) {
	if i == 0 {
		p.reset(x)
	}
}

// Branch starts the next walk: the root's thread for it is its tag.
func (p *pctStrategy) Branch(x Path, _ *Branch) error {
	p.reset(x)
	x.newWalk(p.step(x, 0).Thread) // no thread is at an _xbegin at the root
	return nil
}

// Pick continues the walk (the path asks at every node of the walk but the
// root's, which is a tag, except on the first walk).
func (p *pctStrategy) Pick(x Path) record.Choice {
	last := x.depth() - 1
	if p.walk != x.executions()+1 {
		// Resumed within a walk: its start was drawn by the process that
		// stored the frontier; draw it again along the path's nodes.
		p.reset(x)
		for j := range last {
			p.step(x, j)
		}
	}
	return p.step(x, last)
}

// step is the walk's choice at node j (its step j+1): the thread choose
// gives and, where that thread is stopped at an _xbegin, a fair coin for
// its transaction: it starts, or aborts with RETRY (no coin under
// Spec.STM, as in random walks).
func (p *pctStrategy) step(x Path, j int) record.Choice {
	c := record.Choice{Thread: p.choose(x.node(j).runnable, j+1)}
	if !x.stm() && x.atXbegin(j, c.Thread) && p.rng.IntN(2) == 1 {
		c.Value = record.XabortRetry
	}
	return c
}

// reset starts walk x.executions()+1: its PRNG, no thread seen, and its change
// points in 1..K, K the rounded average depth of the walks before it.
func (p *pctStrategy) reset(x Path) {
	p.walk = x.executions() + 1
	p.rng = rand.New(rand.NewPCG(p.seed, uint64(p.walk)))
	p.order, p.low, p.change = p.order[:0], p.low[:0], p.change[:0]
	if n := x.executions(); n > 0 {
		k := max((x.depthTotal()+n/2)/n, 1)
		for m := min(p.depth-1, k); len(p.change) < m; {
			if c := 1 + p.rng.IntN(k); !slices.Contains(p.change, c) {
				p.change = append(p.change, c)
			}
		}
	}
}

// choose is the thread to run as the walk's step (1-based) from a node
// where these threads can run: it ranks the threads seen for the first
// time, takes the one of highest priority, and lowers it if the step is a
// change point.
func (p *pctStrategy) choose(runnable []record.TID, step int) record.TID {
	for _, t := range runnable {
		if !slices.Contains(p.order, t) {
			p.order = slices.Insert(p.order, p.rng.IntN(len(p.order)+1), t)
		}
	}
	var best record.TID
	bestPrio := -1
	for _, t := range runnable {
		if pr := p.priority(t); pr > bestPrio {
			best, bestPrio = t, pr
		}
	}
	if i := slices.Index(p.change, step); i >= 0 && best != 0 {
		p.low = slices.DeleteFunc(p.low, func(l pctLow) bool { return l.t == best })
		p.low = append(p.low, pctLow{best, i + 1})
	}
	return best
}

// priority is thread t's current priority (t has been seen).
func (p *pctStrategy) priority(t record.TID) int {
	for _, l := range p.low {
		if l.t == t {
			return l.prio
		}
	}
	return p.depth + slices.Index(p.order, t)
}
