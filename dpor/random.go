package dpor

import (
	"landslide/record"
	"landslide/schedule"
)

// Random walks: each interleaving is an independent walk from the root,
// choosing uniformly among the runnable threads at every PP. Walk k (the
// k-th interleaving, 1-based) uses seed Spec.Seed+k-1 exactly as
// `landslide run --seed` does, so `landslide run --seed SEED+k-1` repeats
// it. It never completes: a budget or an interleaving limit ends it.
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
func (*randomStrategy) allValues(*Explorer, int, record.Choice) bool { return false }
func (*randomStrategy) Skip(*Explorer, int, record.Choice) bool      { return false }

// Reached: the first walk draws its root's thread in Pick.
func (r *randomStrategy) Reached(x *Explorer, i int) {
	if i == 0 {
		r.reset(x.executed + 1)
	}
}

// Branch starts the next walk: the root's thread for it is its tag.
func (r *randomStrategy) Branch(x *Explorer, _ *Branch) error {
	r.startWalk(x)
	return nil
}

// startWalk draws the root's thread of the next walk and tags it there.
func (r *randomStrategy) startWalk(x *Explorer) {
	root := &x.nodes[0]
	root.explored, root.tagged = nil, nil
	r.reset(x.executed + 1)
	x.tag(0, r.choose(root.runnable))
}

// Pick continues the walk (the path asks where no tag is pending: at
// every node of the walk but the root's, which is a tag, except on the
// first walk).
func (r *randomStrategy) Pick(x *Explorer) record.Choice {
	if w := x.executed + 1; r.walk != w && len(x.nodes) > 1 {
		// Resumed between walks: the root's draw was made by the process
		// that stored the frontier; redo it.
		r.reset(w)
		r.choose(x.nodes[0].runnable)
	}
	return record.Choice{Thread: r.choose(x.nodes[len(x.nodes)-1].runnable)}
}

func (r *randomStrategy) reset(walk int) {
	r.walk = walk
	r.rng = schedule.NewRandom(r.seed + uint64(walk) - 1)
	if r.m == nil {
		r.m = &pickMachine{}
	}
}

// choose draws as schedule.Random does at a PP with these threads.
func (r *randomStrategy) choose(runnable []record.TID) record.TID {
	r.m.runnable = runnable
	c, err := r.rng.Choose(r.m, 0)
	if err != nil {
		return 0
	}
	return c.Thread
}

// pickMachine shows schedule.Random the runnable threads of a node.
type pickMachine struct {
	record.Machine
	runnable []record.TID
}

func (p *pickMachine) Runnable() []record.TID { return p.runnable }
