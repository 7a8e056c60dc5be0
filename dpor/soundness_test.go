package dpor

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomProgram builds 2 threads of up to 6 operations or 3 of up to 4
// over two variables and two mutexes (locks always released, so deadlocks
// come only from lock order), small enough to enumerate every
// interleaving.
func randomProgram(r *rand.Rand) [][]op {
	n := 2 + r.IntN(2)
	limit := 6
	if n == 3 {
		limit = 4
	}
	prog := make([][]op, n)
	for i := range prog {
		var ops []op
		held := -1
		for len(ops) < limit-1 {
			switch c := r.IntN(10); {
			case c < 3:
				ops = append(ops, op{kind: opLoad, v: r.IntN(2)}, op{kind: opInc}, op{kind: opStore, v: r.IntN(2)})
			case c < 5:
				ops = append(ops, op{kind: opAdd, v: r.IntN(2), arg: int64(1 + r.IntN(3))})
			case c < 6:
				ops = append(ops, op{kind: opLoad, v: r.IntN(2)})
			case c < 8 && held < 0:
				held = r.IntN(2)
				ops = append(ops, op{kind: opLock, v: held})
			case c < 9 && held >= 0:
				ops = append(ops, op{kind: opUnlock, v: held})
				held = -1
			default:
				ops = append(ops, op{kind: opAssert, v: r.IntN(2), arg: int64(r.IntN(3))})
			}
		}
		if held >= 0 {
			ops = append(ops, op{kind: opUnlock, v: held})
		}
		if len(ops) > limit {
			ops = ops[:limit]
			held = -1
			for _, o := range ops {
				switch o.kind {
				case opLock:
					held = o.v
				case opUnlock:
					held = -1
				}
			}
			if held >= 0 {
				ops[limit-1] = op{kind: opUnlock, v: held}
			}
		}
		prog[i] = ops
	}
	return prog
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestSoundnessRandomModels: on 200 random small programs (a quarter of
// them for the strategies other than dpor), DPOR (with and
// without sleep sets) and every other exhaustive strategy but a
// restricted one (ICB and CB-DPOR run to the maximal bound, optimal) reach exactly the
// final states and failures that enumerating every interleaving reaches,
// and never explore more interleavings.
func TestSoundnessRandomModels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 200; n++ {
		prog := randomProgram(r)
		full := explore(t, newModel(prog...), Options{Spec: Spec{Strategy: "full"}})
		want := keys(full.outcomes)
		type variant struct {
			name string
			opt  Options
		}
		variants := []variant{
			{"dpor", Options{Spec: Spec{NoSleepSets: true}}},
			{"thesis-dpor", Options{Spec: Spec{NoSleepSets: true, AllPairs: true}}},
			{"thesis-dpor+sleep", Options{Spec: Spec{AllPairs: true}}},
			{"dpor+sleep", Options{}},
		}
		for _, st := range Strategies() { // every exhaustive strategy, with its defaults
			if st.Exhaustive && !st.Restricted && st.Name != DefaultStrategy {
				variants = append(variants, variant{st.Name, Options{Spec: Spec{Strategy: st.Name}}})
			}
		}
		for _, v := range variants {
			if v.opt.Strategy != "" && v.opt.Strategy != "optimal" && n%4 != 0 {
				continue // a round per bound: costly; a quarter of the programs
			}
			got := explore(t, newModel(prog...), v.opt)
			if !got.res.Complete {
				t.Fatalf("program %d %v: %s did not complete", n, prog, v.name)
			}
			if g := keys(got.outcomes); !slices.Equal(g, want) {
				t.Fatalf("program %d %v: %s reached %v, every interleaving reaches %v", n, prog, v.name, g, want)
			}
			if got.res.Interleavings > full.res.Interleavings {
				t.Fatalf("program %d: %s explored %d > %d", n, v.name, got.res.Interleavings, full.res.Interleavings)
			}
		}
	}
}

// TestICBBoundZero: with bound 0 only non-preemptive interleavings run:
// for x++ that is thread 1 then thread 2 and the reverse (the choice at
// the root is free), and the result says the bound cut the search.
func TestICBBoundZero(t *testing.T) {
	r := explore(t, xplusplus(), Options{Spec: Spec{Strategy: "icb", MaxBound: Bound(0)}})
	if r.res.Complete || !r.res.Bounded || r.res.Interleavings != 2 {
		t.Fatalf("bound 0: %d interleavings %v, complete %v bounded %v", r.res.Interleavings, r.schedules, r.res.Complete, r.res.Bounded)
	}
	if len(r.outcomes) != 1 {
		t.Fatalf("bound 0 outcomes %v, want only x==2", r.outcomes)
	}
}

// TestICBBoundedSoundness: at every bound B, ICB (CHESS) reaches exactly
// the outcomes that some interleaving with at most B preemptions reaches
// (enumeration with the preemption count of each interleaving), and none
// of its interleavings has more.
func TestICBBoundedSoundness(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 100; n++ {
		prog := randomProgram(r)
		byBound := map[int]map[string]bool{}
		m := newModel(prog...)
		explore(t, m, Options{Spec: Spec{Strategy: "full"}, OnBranch: func(b *Branch) Stop {
			for k := b.Preemptions; k <= 3; k++ {
				if byBound[k] == nil {
					byBound[k] = map[string]bool{}
				}
				byBound[k][m.outcome()] = true
			}
			return Continue
		}})
		for bound := 0; bound <= 3; bound++ {
			got := explore(t, newModel(prog...), Options{Spec: Spec{Strategy: "icb", MaxBound: Bound(bound)}, OnBranch: func(b *Branch) Stop {
				if b.Preemptions > bound {
					t.Fatalf("program %d %v: ICB bound %d ran %s with %d preemptions", n, prog, bound, schedString(b.Choices), b.Preemptions)
				}
				return Continue
			}})
			if g, w := keys(got.outcomes), keys(byBound[bound]); !slices.Equal(g, w) {
				t.Fatalf("program %d %v: ICB bound %d reaches %v, the interleavings within the bound %v", n, prog, bound, g, w)
			}
		}
	}
}
