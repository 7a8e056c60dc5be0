package dpor

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTMModeCombinations: the transactional-memory modes a strategy
// refuses, each with an error that names the reason, and those it takes.
func TestTMModeCombinations(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string // "" accepted
	}{
		{Spec{RetrySets: true, AbortCodes: true}, "retry sets work with RETRY aborts and DPOR only"},
		{Spec{Strategy: "icb", RetrySets: true}, "retry sets work with RETRY aborts and DPOR only"},
		{Spec{Strategy: "optimal", RetrySets: true}, "not with optimal DPOR"},
		{Spec{Strategy: "cbdpor", RetrySets: true}, "not with CB-DPOR"},
		{Spec{STM: true}, "needs distinct abort codes"},
		{Spec{AbortCodes: true, WeakAtomicity: true}, "needs STM mode"},
		{Spec{Strategy: "optimal", AbortCodes: true}, "optimal DPOR does not inject CONFLICT aborts"},
		{Spec{Strategy: "optimal", AbortCodes: true, STM: true}, "optimal DPOR does not inject CONFLICT aborts"},
		{Spec{Strategy: "cbdpor", AbortCodes: true}, "CB-DPOR does not inject CONFLICT aborts"},
		{Spec{RetrySets: true}, ""},
		{Spec{AbortCodes: true, STM: true}, ""},
		{Spec{Strategy: "full", AbortCodes: true, STM: true, WeakAtomicity: true}, ""},
		{Spec{Strategy: "icb", AbortCodes: true}, ""},
		{Spec{Strategy: "chess-atomic", AbortCodes: true}, ""},
		{Spec{Strategy: "optimal"}, ""},
		{Spec{Strategy: "cbdpor"}, ""},
	} {
		_, err := NewStrategy(c.spec)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want accepted", c.spec, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}

// htm2Model is htm2 (fixtures/src/htm/htm2.c) as a model: each of k
// threads runs n iterations of a transaction that aborts itself when the
// flag (v1) is raised and otherwise increments x (v0), and whose failure
// path raises the flag, increments x and lowers the flag (without the
// mutex: one failure path at a time is not what is tested).
func htm2Model(k, n int) [][]op {
	th := []op{{kind: opLoad, v: 2}}
	for range n {
		th = append(th, op{kind: opTxnIf, v: 0, arg: 1}, op{kind: opGuard, v: 1, arg: 1},
			op{kind: opFallback, v: 0, arg: 1}, op{kind: opGuard, v: 1, arg: 0})
	}
	prog := make([][]op, k)
	for i := range prog {
		prog[i] = th
	}
	return prog
}

// selfAborting reports whether some transition of b's but the last
// (which may end the program: then the branch is an interleaving)
// aborted its own transaction.
func selfAborting(b *Branch) bool {
	for _, tr := range b.Transitions[:max(len(b.Transitions)-1, 0)] {
		if _, ok := tr.SelfAbort(); ok {
			return true
		}
	}
	return false
}

// guardProgram is a random program with transactions that abort
// themselves on a flag other threads raise and lower.
func guardProgram(r *rand.Rand) [][]op {
	prog := make([][]op, 2+r.IntN(2))
	for i := range prog {
		prog[i] = []op{{kind: opLoad, v: r.IntN(3)}}
		for range 1 + r.IntN(3) {
			o := op{v: r.IntN(3), arg: int64(r.IntN(2))}
			switch r.IntN(6) {
			case 0, 1:
				o.kind, o.arg = opTxnIf, int64(r.IntN(3))
			case 2:
				o.kind = opGuard
			case 3:
				o.kind = opSet
			case 4:
				o.kind, o.arg = opFallback, 1
			case 5:
				o.kind = opLoad
			}
			prog[i] = append(prog[i], o)
		}
	}
	return prog
}

// lsStopMisses: the programs of TestSelfAbortStops on which the stop
// loses final states that the thesis's sleep-set check (with or without
// retry sets) reaches without it (-guard.programs 1000 reaches 396 and
// 917). That check is unsound on its own (TestStateDependentAccesses)
// and only reproduces the thesis's figures; it lost these before asleep
// aborts stopped counting too.
var lsStopMisses = map[string]bool{"asleep abort": true, "program 396": true, "program 917": true}

var guardPrograms = flag.Int("guard.programs", 4, "TestSelfAbortStops: how many random programs with self-aborting transactions")

// TestSelfAbortStops: the dpor strategy stops a branch at a transaction
// that aborted itself when the abort injected at its _xbegin explores the
// same state (stopAtSelfAbort). On htm2 as a model and on random programs
// whose transactions abort themselves on flags other threads raise and
// lower, with and without sleep sets, it still reaches every final state
// full enumeration (which never stops a branch) reaches, and every
// Mazurkiewicz trace (traceOf) without one that it reaches without the
// stop; without the stop it reaches every trace of full enumeration
// (with sleep sets it missed some on programs 25, 402, 599, 841 and 940
// of -guard.programs 1000 before wakeChanged). With retry
// sets, with and without sleep sets, it reaches every final state full
// enumeration reaches. With the thesis's sleep-set check, which misses
// final states of some of these programs with and without the stop, the
// stop loses none that the check reaches without it, but on the programs
// of lsStopMisses.
// statesAndTraces explores prog once under spec and returns what
// stateOutcomes, traces and allTraces would each have explored it for:
// its outcomes, the traces of its executions (not sleep-set blocked or
// stopped at a self-abort) with their counts, and every branch's trace
// with a schedule of it.
func statesAndTraces(t *testing.T, prog [][]op, spec Spec) (map[string]bool, map[string]int, map[string]string, *Result) {
	t.Helper()
	m := newModel(prog...)
	states, counts, all := map[string]bool{}, map[string]int{}, map[string]string{}
	r := explore(t, m, Options{Spec: spec, OnBranch: func(b *Branch) Stop {
		states[m.finalState()] = true
		tr := traceOf(b.Transitions, b.Choices)
		if !b.SleepBlocked && !b.SelfAbort {
			counts[tr]++
		}
		if _, ok := all[tr]; !ok {
			all[tr] = schedString(b.Choices)
		}
		return Continue
	}})
	return states, counts, all, r.res
}

func TestSelfAbortStops(t *testing.T) {
	t.Parallel()
	check := func(name string, prog [][]op) (stops int) {
		t.Helper()
		want, _, wantTr, _ := statesAndTraces(t, prog, Spec{Strategy: "full"})
		for _, spec := range []Spec{{}, {NoSleepSets: true}} {
			got, gotTr, _, res := statesAndTraces(t, prog, spec)
			if !maps.Equal(got, want) {
				t.Errorf("%s %v under %+v: reached %v, full enumeration %v", name, prog, spec, keys(got), keys(want))
			}
			stops += res.SelfAborts
			all := map[string]bool{}
			kept := map[string]bool{}
			explore(t, newModel(prog...), Options{Spec: spec, keepSelfAborts: true, OnBranch: func(b *Branch) Stop {
				all[traceOf(b.Transitions, b.Choices)] = true
				if !selfAborting(b) {
					kept[traceOf(b.Transitions, b.Choices)] = true
				}
				return Continue
			}})
			for tr, sched := range wantTr {
				if !all[tr] {
					t.Errorf("%s %v under %+v without the stop: misses trace %s of full enumeration (%s)", name, prog, spec, tr, sched)
					break
				}
			}
			for tr := range kept {
				if gotTr[tr] == 0 {
					t.Errorf("%s %v under %+v: misses trace %s, which it reaches without the stop", name, prog, spec, tr)
					break
				}
			}
		}
		for _, spec := range []Spec{{RetrySets: true}, {RetrySets: true, NoSleepSets: true}} {
			if got, _ := stateOutcomes(t, prog, spec); !maps.Equal(got, want) {
				t.Errorf("%s %v under %+v: reached %v, full enumeration %v", name, prog, spec, keys(got), keys(want))
			}
		}
		lost := false
		for _, spec := range []Spec{{LandslideSleepSets: true}, {LandslideSleepSets: true, RetrySets: true}} {
			got, _ := stateOutcomes(t, prog, spec)
			without, _ := stateOutcomesOpt(t, prog, Options{Spec: spec, keepSelfAborts: true})
			for o := range without {
				if !got[o] {
					lost = true
					if !lsStopMisses[name] {
						t.Errorf("%s %v under %+v: misses final state %s, which it reaches without the stop", name, prog, spec, o)
					}
				}
			}
		}
		if lsStopMisses[name] && !lost {
			t.Errorf("%s: the thesis's check now loses no final state to the stop: drop it from lsStopMisses", name)
		}
		return stops
	}
	for _, kn := range [][2]int{{2, 1}, {2, 2}} {
		if stops := check(fmt.Sprintf("htm2(%d,%d)", kn[0], kn[1]), htm2Model(kn[0], kn[1])); stops == 0 {
			t.Errorf("htm2(%d,%d): no branch stopped at a self-abort", kn[0], kn[1])
		}
	}
	// Random program 841, shrunk. The final state v = [1 1 1] with T3's
	// transaction aborted and T1's and T2's second committed needs T2's
	// first to abort, T3 to read v1 before T1's transaction, and T1's
	// before T2's second, and that before T3 sets v2. Where T3's
	// transaction aborted itself on such a branch, its abort was asleep
	// there, from a subtree that had left the reversal it needed to this
	// branch's continuation; stopping there lost the state (an asleep
	// abort no longer counts).
	check("asleep abort", [][]op{
		{{kind: opLoad, v: 2}, {kind: opTxnIf, v: 1, arg: 0}},
		{{kind: opLoad, v: 0}, {kind: opTxnIf, v: 2, arg: 1}, {kind: opTxnIf, v: 0, arg: 2}},
		{{kind: opLoad, v: 1}, {kind: opFallback, v: 0, arg: 1}, {kind: opTxnIf, v: 0, arg: 0}, {kind: opSet, v: 2, arg: 1}}})
	r := rand.New(rand.NewPCG(31, 32))
	stopped := 0
	for n := range *guardPrograms {
		if check(fmt.Sprintf("program %d", n), guardProgram(r)) > 0 {
			stopped++
		}
	}
	if stopped < *guardPrograms/4 {
		t.Errorf("only %d of %d random programs stopped a branch at a self-abort: the stop is hardly tested", stopped, *guardPrograms)
	}
	t.Logf("%d of %d random programs stopped a branch at a self-abort", stopped, *guardPrograms)
}
