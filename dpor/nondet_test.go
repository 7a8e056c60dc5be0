package dpor

import (
	"flag"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNondetCounts: every value of a nondet call is explored: the dpor
// strategy reaches every trace, optimal DPOR each exactly once. The counts, by hand (each nondet call follows a thread-local
// step, where its value is chosen): a thread alone with 3 values has 3
// traces. A writer whose value 0 writes nothing, beside one reader, has
// 1 trace with value 0 and 2 (the reader before or after the write) with
// value 1: 3. With two readers and 3 values: 1 + 2·2² = 9. Full
// enumeration runs every order of every value: 3, 3·2 = 6 (one reader:
// 3 places among the writer's 2 steps; value 0 too), 3·12 = 36.
func TestNondetCounts(t *testing.T) {
	writer := func(n int64) []op { return []op{{kind: opInc}, {kind: opNondet, arg: n}} }
	load := []op{{kind: opLoad}}
	cases := []struct {
		name       string
		prog       [][]op
		want, full int
	}{
		{"alone", [][]op{writer(3)}, 3, 3},
		{"one reader", [][]op{writer(2), load}, 3, 6},
		{"two readers", [][]op{writer(3), load, load}, 9, 36},
		{"reader first", [][]op{load, writer(2)}, 3, 6},
	}
	for _, c := range cases {
		all, f := traces(t, newModel(c.prog...), Options{Spec: Spec{Strategy: "full"}})
		if f.res.Interleavings != c.full || len(all) != c.want {
			t.Errorf("%s: full enumeration ran %d interleavings of %d traces, want %d of %d", c.name, f.res.Interleavings, len(all), c.full, c.want)
		}
		for _, s := range []string{"dpor", "optimal"} {
			seen, r := traces(t, newModel(c.prog...), Options{Spec: Spec{Strategy: s}})
			if len(seen) != c.want || r.res.Interleavings > c.full || !r.res.Complete || s == "optimal" && r.res.Interleavings != c.want {
				t.Errorf("%s, %s: %d interleavings of %d traces (complete %v); want the %d traces, each once with optimal",
					c.name, s, r.res.Interleavings, len(seen), r.res.Complete, c.want)
			}
		}
	}
}

// withNondet puts a nondet call of 2 to maxValues values into some
// threads of a random program, after their first or second operation (a
// value is chosen by the step before the call).
func withNondet(r *rand.Rand, prog [][]op, maxValues int) [][]op {
	for i := range prog {
		if r.IntN(2) == 0 {
			continue
		}
		k := 1 + r.IntN(min(2, len(prog[i])))
		o := op{kind: opNondet, v: r.IntN(2), arg: int64(2 + r.IntN(maxValues-1))}
		prog[i] = slices.Insert(slices.Clone(prog[i]), k, o)
	}
	return prog
}

// TestNondetSoundness: on random programs with nondet calls (and locks,
// atomic adds, assertions), every exhaustive strategy reaches exactly the
// final states and failures of full enumeration over every value.
var nondetPrograms = flag.Int("nondet.programs", 10, "TestNondetSoundness: how many random programs (TestNondetOptimalTraces: five eighths as many)")

func TestNondetSoundness(t *testing.T) {
	t.Parallel() // after the sequential tests (runKeeping's global is theirs alone)
	r := rand.New(rand.NewPCG(21, 22))
	for n := 0; n < *nondetPrograms; n++ {
		prog := withNondet(r, randomProgram(r), 2)
		if size(prog) > 11 {
			n--
			continue // enumeration would take seconds
		}
		full := explore(t, newModel(prog...), Options{Spec: Spec{Strategy: "full"}})
		want := keys(full.outcomes)
		specs := []Spec{{}, {NoSleepSets: true}, {AllPairs: true}, {Strategy: "optimal"}}
		if n%4 == 0 {
			specs = append(specs, Spec{Strategy: "icb"})
		}
		for _, s := range specs {
			got := explore(t, newModel(prog...), Options{Spec: s})
			if g := keys(got.outcomes); !got.res.Complete || !slices.Equal(g, want) {
				t.Fatalf("program %d %v: %+v reached %v (complete %v), every interleaving reaches %v", n, prog, s, g, got.res.Complete, want)
			}
			if got.res.Interleavings > full.res.Interleavings {
				t.Fatalf("program %d: %+v explored %d > %d", n, s, got.res.Interleavings, full.res.Interleavings)
			}
		}
	}
}

func size(prog [][]op) int {
	n := 0
	for _, ops := range prog {
		n += len(ops)
	}
	return n
}

// TestNondetOptimalTraces: on random lock-free programs with nondet
// calls, optimal DPOR explores every trace (values included) of full
// enumeration, and no other, and so does the dpor strategy. Optimal DPOR
// is not optimal with nondet calls (a transition's variants stay out of
// the sleep sets: see advance); the log gives the counts (on 2026-11-26,
// 60 programs, -nondet.programs 96: 24,469 traces, optimal DPOR 35,775
// interleavings, dpor 26,043).
func TestNondetOptimalTraces(t *testing.T) {
	t.Parallel() // after the sequential tests (runKeeping's global is theirs alone)
	r := rand.New(rand.NewPCG(23, 24))
	total, opt, dp := 0, 0, 0
	for n := 0; n < *nondetPrograms*5/8; n++ {
		prog := withNondet(r, lockFreeProgram(r), 3)
		all, _ := traces(t, newModel(prog...), Options{Spec: Spec{Strategy: "full"}})
		got, run := traces(t, newModel(prog...), Options{Spec: Spec{Strategy: "optimal"}})
		dgot, d := traces(t, newModel(prog...), Options{})
		for tr := range got {
			if all[tr] == 0 {
				t.Fatalf("program %d %v: explored trace %q that enumeration never reaches", n, prog, tr)
			}
		}
		if len(got) != len(all) || len(dgot) != len(all) {
			t.Fatalf("program %d %v: %d traces explored by optimal DPOR, %d by dpor, enumeration has %d", n, prog, len(got), len(dgot), len(all))
		}
		total += len(all)
		opt += run.res.Interleavings
		dp += d.res.Interleavings
	}
	t.Logf("%d traces: optimal DPOR %d interleavings, dpor %d", total, opt, dp)
}
