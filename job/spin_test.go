package job

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"landslide/dpor"
	"landslide/kernel"
)

// TestSpinLoopsAgainstBounds: the kernel's spin-loop rule (kernel's
// spin.go) blocks a thread only when that drops no final state. Each
// program of fixtures/src/spin/spin_oracle.c runs once with its spin
// loops unbounded, where the rule must block the spinners for the
// exploration to end, and once with each loop bounded to K iterations,
// where a loop that runs out makes the execution infeasible (blocked,
// not counted) and the loop's counter keeps the rule from ever blocking
// it.
//   - With every shared access a PP, exploring the bounded program
//     without the rule (dpor; full enumeration where it is small)
//     reaches the final states the unbounded one reaches with iterations
//     to spare; with the rule, dpor and optimal DPOR must reach exactly
//     those.
//   - With the default PP set the loops have no PP in them: a bounded
//     loop that does not exit at once runs out within its transition, so
//     the bounded program reaches only the states where no thread had to
//     wait. The transition probe blocks a spinner at its loop (PPSpin),
//     which lets the others run: the unbounded program must reach every
//     state the bounded one does, and no state that every shared access
//     a PP does not reach.
//
// No exploration of the unbounded program may end in a deadlock or a
// loop: every spinner here is woken in every execution.
func TestSpinLoopsAgainstBounds(t *testing.T) {
	_, img := image(t, "spin/spin_oracle")
	const k = "3"
	cfg := func(prog int, bound string, every bool) kernel.Config {
		c := kernel.Config{Args: []string{"spin_oracle", fmt.Sprint(prog), bound}}
		if every {
			c.EveryAccess, c.MaxPPs = true, kernel.TooDeepPreemptEverywhere
		}
		return c
	}
	unbounded := func(name string, c kernel.Config) []string {
		var first []string
		for _, strategy := range []string{"dpor", "optimal"} {
			res, got := explored(t, img, c, dpor.Options{Spec: dpor.Spec{Strategy: strategy}})
			if !res.Complete {
				t.Fatalf("%s, unbounded, %s: incomplete", name, strategy)
			}
			for o := range got {
				if strings.HasPrefix(o, "deadlock") || strings.HasPrefix(o, "loop") {
					t.Errorf("%s, unbounded, %s: %s", name, strategy, o)
				}
			}
			if first == nil {
				first = keys(got)
			} else if !slices.Equal(keys(got), first) {
				t.Errorf("%s, unbounded: optimal DPOR reached\n%v\ndpor\n%v", name, keys(got), first)
			}
			t.Logf("%s, unbounded, %s: %d interleavings, %d outcomes", name, strategy, res.Interleavings, len(got))
		}
		return first
	}
	for prog := 1; prog <= 7; prog++ {
		name := fmt.Sprintf("program %d", prog)
		bres, want := explored(t, img, cfg(prog, k, true), dpor.Options{})
		if !bres.Complete || bres.Blocked == 0 {
			t.Fatalf("%s, bounded: complete %v, %d blocked executions (the bound must cut some loop)", name, bres.Complete, bres.Blocked)
		}
		if prog == 1 {
			_, full := explored(t, img, cfg(prog, k, true), dpor.Options{Spec: dpor.Spec{Strategy: "full"}})
			if !slices.Equal(keys(full), keys(want)) {
				t.Fatalf("%s, bounded: dpor reached\n%v\nfull enumeration\n%v", name, keys(want), keys(full))
			}
		}
		every := unbounded(name+" (every access)", cfg(prog, "0", true))
		if !slices.Equal(every, keys(want)) {
			t.Errorf("%s (every access), unbounded: outcomes\n%v\nbounded to %s iterations:\n%v", name, every, k, keys(want))
		}
		if len(every) < 2 && prog != 7 { // 7: the use after free, whatever the order
			t.Errorf("%s: every interleaving ends the same way (%v): a weak test", name, every)
		}
		_, coarse := explored(t, img, cfg(prog, k, false), dpor.Options{})
		sync := unbounded(name+" (default PPs)", cfg(prog, "0", false))
		for o := range coarse {
			if !slices.Contains(sync, o) {
				t.Errorf("%s (default PPs): the bounded program reaches %s, the unbounded one does not (it reaches %v)", name, o, sync)
			}
		}
		for _, o := range sync {
			if !slices.Contains(every, o) {
				t.Errorf("%s (default PPs): the unbounded program reaches %s, which no interleaving of its shared accesses does (%v)", name, o, every)
			}
		}
	}
}

// TestThesisHeuristicsDropOutcomes: late_write's reader makes 25 atomic
// loads and its writer one store, so the store can come before any load
// or after all of them: 26 outcomes, which the spin-loop rule (the
// default) keeps, every one of them. The thesis's xchg-loop heuristic
// blocks the reader after 20 atomics until a write: the outcomes where
// the write comes after the 20th load are gone, which is why it runs only
// with ThesisHeuristics.
func TestThesisHeuristicsDropOutcomes(t *testing.T) {
	_, img := image(t, "posix/late_write")
	for _, thesis := range []bool{false, true} {
		kc := kernel.Config{Args: []string{"late_write", "25"}, EveryAccess: true, MaxPPs: kernel.TooDeepPreemptEverywhere, ThesisHeuristics: thesis}
		res, got := explored(t, img, kc, dpor.Options{})
		var want []string
		last := 25
		if thesis {
			last = 20
		}
		for i := 0; i <= last; i++ {
			want = append(want, fmt.Sprintf("exit 0: %q", fmt.Sprintf("seen at %d\n", i)))
		}
		slices.Sort(want)
		if !res.Complete || !slices.Equal(keys(got), want) {
			t.Errorf("thesis heuristics %v: complete %v, outcomes\n%v\nwant\n%v", thesis, res.Complete, keys(got), want)
		}
	}
}
