package dpor

import (
	"flag"
	"maps"
	"math/rand/v2"
	"testing"

	"landslide/record"
)

// TestRetrySetBlocking: a race's preempted thread waits (the default
// schedule passes it over) until the other threads of its retry set have
// passed their _xbegin; when it is the only runnable thread, the wait
// would deadlock and the node's sets are abandoned (thesis §6.2.5).
func TestRetrySetBlocking(t *testing.T) {
	x := &Explorer{}
	x.nodes = []node{{runnable: []record.TID{1, 2, 3}, consIn: retryCons{1: resSuccess | resWait, 2: resAbort}}}
	if q := x.unblocked(0, 1); q != 2 {
		t.Errorf("thread 1 waits for thread 2's _xbegin: the default 1 became %d, want 2", q)
	}
	if q := x.unblocked(0, 3); q != 3 {
		t.Errorf("thread 3 is free: %d", q)
	}
	// Thread 2 has passed: thread 1 waits no more.
	x.nodes[0].consIn = retryCons{1: resSuccess | resWait}
	if q := x.unblocked(0, 1); q != 1 {
		t.Errorf("nothing left to wait for: %d, want 1", q)
	}
	// Two sets merged so that each thread waits for the other: saturated,
	// neither waits.
	x.nodes[0].consIn = retryCons{1: resSuccess | resWait, 2: resAbort | resWait}
	if waits(x.nodes[0].consIn, 1) || waits(x.nodes[0].consIn, 2) {
		t.Error("threads that wait for each other must not wait")
	}
	// Only the waiting thread can run: abandon the wait, keep the results.
	x.nodes[0] = node{runnable: []record.TID{1}, consIn: retryCons{1: resSuccess | resWait, 2: resAbort}}
	if q := x.unblocked(0, 1); q != 1 {
		t.Errorf("deadlock: %d, want 1 to run", q)
	}
	if want := (retryCons{1: resSuccess, 2: resAbort}); !maps.Equal(x.nodes[0].consIn, want) {
		t.Errorf("after abandoning: constraints %v, want %v", x.nodes[0].consIn, want)
	}
	// A wait alone forces no result.
	x.nodes[0] = node{runnable: []record.TID{1, 2}, consIn: retryCons{1: resWait, 2: resSuccess}}
	if !x.retryAllows(0, 1) || x.retryAllows(0, 2) {
		t.Error("a waiting thread with no result in the set must be free to abort; thread 2 must not")
	}
	// A set that only made a thread wait leaves it free after
	// abandoning: no result is forced on it.
	x.nodes[0] = node{runnable: []record.TID{1}, consIn: retryCons{1: resWait, 2: resAbort}}
	x.unblocked(0, 1)
	if _, ok := x.nodes[0].consIn[1]; ok || !x.retryAllows(0, 3) {
		t.Errorf("after abandoning a bare wait: %v", x.nodes[0].consIn)
	}
}

// TestRetrySetPasses: a retry set holds the results of the race's
// _xbegin passes that the reversal runs again. Thread 1 aborts at its
// _xbegin (transition 0) and its failure path (1) races with thread 2's
// transaction (2). Reversing (1, 2) starts at node 1, after thread 1's
// pass: its result is in the prefix, and forcing it on thread 1's next
// pass, a later transaction, would prune that transaction's commit for
// no race. Reversing (0, 2) runs thread 1's pass again.
func TestRetrySetPasses(t *testing.T) {
	x := &Explorer{opt: Options{Spec: Spec{RetrySets: true}}}
	x.nodes = []node{{xb: []record.TID{1, 2}}, {xb: []record.TID{2}}, {xb: []record.TID{2}}}
	x.trs = []*record.Transition{{Thread: 1}, {Thread: 1}, {Thread: 2}}
	x.choices = []record.Choice{{Thread: 1, Value: record.XabortRetry}, {Thread: 1}, {Thread: 2}}
	x.noteRace(1, 2)
	if want := (retryCons{1: resWait, 2: resSuccess}); !maps.Equal(x.rsNext, want) {
		t.Errorf("race (1, 2): retry set %v, want %v", x.rsNext, want)
	}
	x.noteRace(0, 2)
	if want := (retryCons{1: resAbort | resWait, 2: resSuccess}); !maps.Equal(x.rsNext, want) {
		t.Errorf("race (0, 2): retry set %v, want %v", x.rsNext, want)
	}
	// No committed transaction in the race (thread 1's aborted pass or
	// its failure path, against a plain access of thread 2 before any
	// _xbegin): free.
	x.nodes[2].xb = nil
	for _, i := range []int{0, 1} {
		x.noteRace(i, 2)
		if x.rsNext != nil {
			t.Errorf("race (%d, 2), without a transaction: retry set %v, want none", i, x.rsNext)
		}
	}
}

// TestRetrySetsMissAFinalState: retry sets are not exact, and the
// explorer says so (Result.Caveat). Thread 2 runs two transactions that
// each add 2 to x; thread 1 reads x. Full enumeration (and dpor without
// -R) reaches the final state where thread 2's first transaction aborted,
// its second committed, and thread 1 read x = 2 after it; retry sets do
// not: the retry set of the race between thread 1's read and the first
// transaction forces that transaction to commit in the reversal, and the
// later race with the second transaction finds thread 2's tag at the root
// already explored (as traced on a program of the same shape). Of the random programs of TestOptimalTransactions'
// kind, retry sets missed a final state on 13 of 400 (seed 21, 22), and
// on 14 of 300 of TestSelfAbortStops's (-retry.count counts them).
func TestRetrySetsMissAFinalState(t *testing.T) {
	prog := [][]op{{{kind: opLoad, v: 2}, {kind: opLoad, v: 0}},
		{{kind: opLoad, v: 0}, {kind: opTxn, v: 0, arg: 2}, {kind: opTxn, v: 0, arg: 2}}}
	const state = "[2 0 0 0][2 0]" // x = 2; thread 1 read 2; thread 2's last transaction committed
	full, _ := stateOutcomes(t, prog, Spec{Strategy: "full"})
	plain, res := stateOutcomes(t, prog, Spec{})
	if !full[state] || !plain[state] || res.Caveat != "" {
		t.Fatalf("full enumeration reached %v, dpor %v (caveat %q): want %s in both, no caveat", keys(full), keys(plain), res.Caveat, state)
	}
	got, res := stateOutcomes(t, prog, Spec{RetrySets: true})
	if got[state] {
		t.Errorf("retry sets reached %s: if they are now exact, drop RetrySetsCaveat and this test", state)
	}
	if res.Caveat != RetrySetsCaveat {
		t.Errorf("retry sets: caveat %q, want %q", res.Caveat, RetrySetsCaveat)
	}
	if !*countMisses {
		return
	}
	// The counts this test's comment and BENCHMARKS.md quote.
	for _, c := range []struct {
		name string
		seed [2]uint64
		n    int
		gen  func(*rand.Rand) [][]op
	}{
		{"TestOptimalTransactions' programs", [2]uint64{21, 22}, *txnPrograms, txnProgram},
		{"TestSelfAbortStops's programs", [2]uint64{31, 32}, 300, guardProgram},
	} {
		r := rand.New(rand.NewPCG(c.seed[0], c.seed[1]))
		missed := map[string]int{}
		for range c.n {
			prog := c.gen(r)
			want, _ := stateOutcomes(t, prog, Spec{Strategy: "full"})
			for name, spec := range map[string]Spec{"retry sets": {RetrySets: true}, "the thesis's sleep-set check": {LandslideSleepSets: true}, "dpor": {}} {
				if got, _ := stateOutcomes(t, prog, spec); !maps.Equal(got, want) {
					missed[name]++
				}
			}
		}
		t.Logf("%s, %d: a final state missed by retry sets on %d, by the thesis's sleep-set check on %d, by dpor on %d",
			c.name, c.n, missed["retry sets"], missed["the thesis's sleep-set check"], missed["dpor"])
		if missed["dpor"] > 0 {
			t.Errorf("%s: dpor missed a final state on %d", c.name, missed["dpor"])
		}
	}
}

var countMisses = flag.Bool("retry.count", false, "TestRetrySetsMissAFinalState: also count the random programs on which retry sets miss a final state (about a minute)")
