package dpor

import (
	"slices"

	"landslide/record"
	"landslide/schedule"
)

// Random walks: each interleaving is an independent walk from the root,
// choosing uniformly among the runnable threads at every PP, and where
// the chosen thread is stopped at an _xbegin, flipping a fair coin for
// its transaction: it starts, or aborts with RETRY (none under Spec.STM,
// whose aborts are CONFLICT ones, which a walk cannot place after the
// access that causes them). Walk k (the k-th interleaving, 1-based) uses
// seed Spec.Seed+k-1 exactly as `landslide run --seed` does, so
// `landslide run --seed SEED+k-1` repeats it (`run` has no --stm). It
// never completes: a budget or an interleaving limit ends it.
func init() {
	register("random", "seeded random walks (--seed): walk k is what landslide run --seed SEED+k-1 runs; never complete", false,
		func(s Spec) (Strategy, error) {
			if err := onlyParams(s, "random", "seed"); err != nil {
				return nil, err
			}
			return &randomStrategy{seed: s.Seed}, nil
		})
}

type randomStrategy struct {
	seed uint64
	walk int // the walk rng draws for (0: none yet)
	rng  *schedule.Random
	m    *pickMachine
}

func (*randomStrategy) Bound(r int) (int, bool) { return onlyRound0(r) }

// allValues: a walk never branches, so a nondet call takes its first
// value, as under landslide run --seed.
func (*randomStrategy) allValues(Path, int, record.Choice) bool { return false }

// Skip refuses every abort the explorer would inject: a walk draws its
// own (walkSkip).
func (*randomStrategy) Skip(_ Path, _ int, c record.Choice) bool { return walkSkip(c) }

// Reached: the first walk draws its root's thread in Pick.
func (r *randomStrategy) Reached(x Path, i int) {
	if i == 0 {
		r.reset(x.executions() + 1)
	}
}

// Branch starts the next walk: the root's thread for it is its tag.
func (r *randomStrategy) Branch(x Path, _ *Branch) error {
	r.startWalk(x)
	return nil
}

// startWalk draws the root's thread of the next walk and tags it there.
func (r *randomStrategy) startWalk(x Path) {
	r.reset(x.executions() + 1)
	x.newWalk(r.choose(x, 0).Thread) // no thread is at an _xbegin at the root
}

// Pick continues the walk (the path asks where no tag is pending: at
// every node of the walk but the root's, which is a tag, except on the
// first walk).
func (r *randomStrategy) Pick(x Path) record.Choice {
	if w := x.executions() + 1; r.walk != w && x.depth() > 1 {
		// Resumed between walks: the root's draw was made by the process
		// that stored the frontier; redo it.
		r.reset(w)
		r.choose(x, 0)
	}
	return r.choose(x, x.depth()-1)
}

func (r *randomStrategy) reset(walk int) {
	r.walk = walk
	r.rng = schedule.NewRandom(r.seed + uint64(walk) - 1)
	if r.m == nil {
		r.m = &pickMachine{}
	}
}

// choose draws as schedule.Random does at node i's PP.
func (r *randomStrategy) choose(x Path, i int) record.Choice {
	r.m.runnable, r.m.xb = x.node(i).runnable, x.node(i).xb
	r.rng.Aborts = !x.stm()
	c, err := r.rng.Choose(r.m, 0)
	if err != nil {
		return record.Choice{}
	}
	return c
}

// pickMachine shows schedule.Random the runnable threads of a node and
// those stopped at an _xbegin there.
type pickMachine struct {
	record.Machine
	runnable, xb []record.TID
}

func (p *pickMachine) Runnable() []record.TID     { return p.runnable }
func (p *pickMachine) AtXbegin(t record.TID) bool { return slices.Contains(p.xb, t) }

// walkSkip is Skip for the strategies whose executions are walks (random,
// PCT): an abort injected at a node would make the next execution
// continue the last walk from there, not start a new one, so the walk
// draws its aborts itself.
func walkSkip(c record.Choice) bool { return c.Value != 0 }
