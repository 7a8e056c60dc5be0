package job

import (
	"context"
	"maps"
	"slices"
	"testing"

	"landslide/dpor"
	"landslide/kernel"
	"landslide/record"
)

// htmTraces explores fixture name (with the data-race PPs of its
// iteration function, as --data-race-func iteration gives) under spec and
// returns the Mazurkiewicz traces (Branch.Class) its executions reach
// (skipSelfAborts: those in which no transaction aborted itself before
// the last transition).
func htmTraces(t *testing.T, name string, spec dpor.Spec, skipSelfAborts bool, args ...string) map[[16]byte]bool {
	t.Helper()
	f, img := image(t, name)
	rp, err := ResolvePPs(img, PPRequest{DataRaceFuncs: []string{"iteration"}, Args: append([]string{f.Path()}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(img, Spec{Kernel: rp.Kernel, Spec: spec}.KernelConfig())
	if err != nil {
		t.Fatal(err)
	}
	out := map[[16]byte]bool{}
	spec.KeepGoing = true
	x, err := dpor.New(k, dpor.Options{Spec: spec, OnBranch: func(b *dpor.Branch) dpor.Stop {
		if !b.SleepBlocked && !b.SelfAbort && (!skipSelfAborts || !selfAborted(b)) {
			out[b.Class()] = true
		}
		return dpor.Continue
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := x.Run(context.Background()); err != nil || !res.Complete {
		t.Fatalf("%s %v (%s): %v, complete %v", name, args, spec.Strategy, err, res != nil && res.Complete)
	}
	return out
}

// TestHTMTracesAgainstFullEnumeration: DPOR and optimal DPOR reach
// exactly the Mazurkiewicz traces full enumeration reaches on the TM
// fixtures at (2,1), with the data-race PPs of their iteration functions
// (DPOR, with RETRY aborts: every one in which no transaction aborted
// itself but at the end, and no other trace than full enumeration's; it
// stops at a self-abort where the abort is injected, dpor.Branch.SelfAbort,
// and completes some where the abort was only asleep):
// there htm2's transactions abort themselves on what they read, a race
// DPOR must reverse (both missed it while the kernel dropped an aborted
// body's reads: 12 and 10 of 14 traces), and with distinct abort codes
// full enumeration injects CONFLICT aborts where DPOR does (it injected
// none: on htm2, 14 traces of DPOR's 20).
func TestHTMTracesAgainstFullEnumeration(t *testing.T) {
	t.Parallel() // independent explorations: the suite's longest package uses both cores
	for _, name := range []string{"htm/htm2", "htm/fig63", "htm/counter"} {
		for _, m := range []int{0, 2} { // RETRY aborts; distinct abort codes
			mode := htmModes[m]
			full := mode.spec
			full.Strategy = "full"
			want := htmTraces(t, name, full, false, "2", "1")
			wantStopped := htmTraces(t, name, full, true, "2", "1")
			strategies := []string{"dpor", "optimal"}
			if mode.spec.AbortCodes {
				strategies = strategies[:1] // optimal DPOR refuses them
			}
			for _, s := range strategies {
				spec := mode.spec
				spec.Strategy = s
				got := htmTraces(t, name, spec, false, "2", "1")
				if s == "dpor" && !mode.spec.AbortCodes {
					for c := range got {
						if !want[c] {
							t.Errorf("%s (2,1) (%s, %s): trace %s, which full enumeration does not reach", name, mode.name, s, c)
						}
					}
					for c := range wantStopped {
						if !got[c] {
							t.Errorf("%s (2,1) (%s, %s): misses trace %s", name, mode.name, s, c)
						}
					}
					continue
				}
				if !maps.Equal(got, want) {
					missing := 0
					for c := range want {
						if !got[c] {
							missing++
						}
					}
					t.Errorf("%s (2,1) (%s, %s): %d traces, %d of full enumeration's %d missing", name, mode.name, s, len(got), missing, len(want))
				}
			}
		}
	}
}

// selfAborted reports whether a transition of b's but the last aborted
// its own transaction.
func selfAborted(b *dpor.Branch) bool {
	return slices.ContainsFunc(b.Transitions[:max(len(b.Transitions)-1, 0)], func(tr *record.Transition) bool {
		_, ok := tr.SelfAbort()
		return ok
	})
}
