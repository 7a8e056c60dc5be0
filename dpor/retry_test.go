package dpor

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"landslide/record"
)

// Constraints in the tests: s, a and f are one pass's results (commit,
// abort, free); w makes the thread wait.
var (
	resS = []uint8{resSuccess}
	resA = []uint8{resAbort}
)

func wait(res []uint8) threadCons  { return threadCons{wait: true, res: res} }
func force(res []uint8) threadCons { return threadCons{res: res} }

// TestRetrySetBlocking: a race's preempted thread waits (the default
// schedule passes it over) until the other threads of its retry set have
// passed their _xbegin; when it is the only runnable thread, the wait
// would deadlock and the node's sets are abandoned (thesis §6.2.5).
func TestRetrySetBlocking(t *testing.T) {
	x := &Explorer{}
	x.nodes = []node{{runnable: []record.TID{1, 2, 3}, consIn: retryCons{1: wait(resS), 2: force(resA)}}}
	if q := x.unblocked(0, 1); q != 2 {
		t.Errorf("thread 1 waits for thread 2's _xbegin: the default 1 became %d, want 2", q)
	}
	if q := x.unblocked(0, 3); q != 3 {
		t.Errorf("thread 3 is free: %d", q)
	}
	// Thread 2 has passed: thread 1 waits no more.
	x.nodes[0].consIn = retryCons{1: wait(resS)}
	if q := x.unblocked(0, 1); q != 1 {
		t.Errorf("nothing left to wait for: %d, want 1", q)
	}
	// Each thread waits for the other: saturated, neither waits.
	x.nodes[0].consIn = retryCons{1: wait(resS), 2: wait(resA)}
	if waits(x.nodes[0].consIn, 1) || waits(x.nodes[0].consIn, 2) {
		t.Error("threads that wait for each other must not wait")
	}
	// Only the waiting thread can run: abandon the wait, keep the results.
	x.nodes[0] = node{runnable: []record.TID{1}, consIn: retryCons{1: wait(resS), 2: force(resA)}}
	if q := x.unblocked(0, 1); q != 1 {
		t.Errorf("deadlock: %d, want 1 to run", q)
	}
	if want := (retryCons{1: force(resS), 2: force(resA)}); !equalCons(x.nodes[0].consIn, want) {
		t.Errorf("after abandoning: constraints %v, want %v", x.nodes[0].consIn, want)
	}
	// A wait alone forces no result.
	x.nodes[0] = node{runnable: []record.TID{1, 2}, consIn: retryCons{1: wait(nil), 2: force(resS)}}
	if !x.retryAllows(0, 1) || x.retryAllows(0, 2) {
		t.Error("a waiting thread with no result in the set must be free to abort; thread 2 must not")
	}
	// A set that only made a thread wait leaves it free after
	// abandoning: no result is forced on it.
	x.nodes[0] = node{runnable: []record.TID{1}, consIn: retryCons{1: wait(nil), 2: force(resA)}}
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
	if got, want := x.retrySet(1, 2), (retryCons{1: wait(nil), 2: force(resS)}); !equalCons(got, want) {
		t.Errorf("race (1, 2): retry set %v, want %v", got, want)
	}
	x.noteRace(0, 2)
	if got, want := x.retrySet(0, 2), (retryCons{1: wait(resA), 2: force(resS)}); !equalCons(got, want) {
		t.Errorf("race (0, 2): retry set %v, want %v", got, want)
	}
	// Only the tag of the race's second thread has the set.
	if got := x.retrySet(0, 1); got != nil {
		t.Errorf("race (0, 2), thread 1's tag: retry set %v, want none", got)
	}
	// No committed transaction in the race (thread 1's aborted pass or
	// its failure path, against a plain access of thread 2 before any
	// _xbegin): free.
	x.nodes[2].xb = nil
	for _, i := range []int{0, 1} {
		x.noteRace(i, 2)
		if got := x.retrySet(i, 2); got != nil {
			t.Errorf("race (%d, 2), without a transaction: retry set %v, want none", i, got)
		}
	}
}

// TestRetrySetsReachEveryFinalState: retry sets reach every final state
// full enumeration reaches, with and without sleep sets, and with the
// thesis's sleep-set check every one that check reaches without them
// (the check itself misses some: TestStateDependentAccesses), except on
// the programs of knownMisses, where they miss one (and the explorer
// says they are not exact: Result.Caveat). First the programs each of
// which a rule of retry.go was written for, shrunk from random ones,
// then random programs of TestOptimalTransactions' and
// TestSelfAbortStops's kinds. Before those rules, retry sets missed a
// final state on 13 of the first 400 and 14 of the first 300 of them;
// -retry.programs 1000 runs 2,000.
func TestRetrySetsReachEveryFinalState(t *testing.T) {
	t.Parallel() // after the sequential tests (runKeeping's global is theirs alone)
	missed := map[string]bool{}
	check := func(name string, prog [][]op) {
		t.Helper()
		truth := map[Spec]map[string]bool{} // full enumeration's once, not per case
		for _, c := range []struct {
			label         string
			with, without Spec
		}{
			{"sleep sets", Spec{RetrySets: true}, Spec{Strategy: "full"}},
			{"no sleep sets", Spec{RetrySets: true, NoSleepSets: true}, Spec{Strategy: "full"}},
			{"the thesis's check", Spec{RetrySets: true, LandslideSleepSets: true}, Spec{LandslideSleepSets: true}},
		} {
			want, ok := truth[c.without]
			if !ok {
				want, _ = stateOutcomes(t, prog, c.without)
				truth[c.without] = want
			}
			got, res := stateOutcomes(t, prog, c.with)
			key := name + ", " + c.label
			for o := range want {
				if got[o] {
					continue
				}
				if knownMisses[key] {
					missed[key] = true
				} else {
					t.Errorf("%s %v under %+v: misses final state %s, which %+v reaches", name, prog, c.with, o, c.without)
				}
				break
			}
			txn := slices.ContainsFunc(prog, func(th []op) bool {
				return slices.ContainsFunc(th, func(o op) bool { return o.kind == opTxn || o.kind == opTxnIf })
			})
			if (res.Caveat == RetrySetsCaveat) != txn {
				t.Errorf("%s under %+v (transactions: %v): caveat %q", name, c.with, txn, res.Caveat)
			}
		}
	}
	// Thread 2 runs two transactions that each add 2 to x; thread 1 reads
	// x. The final state where the first aborted, the second committed
	// and thread 1 read x = 2 after it was missed: the race with the
	// first transaction forced it to commit in the reversal, and the race
	// with the second found thread 2's tag at the root explored (a tag per
	// set; sets that name the passes).
	check("two transactions", [][]op{{{kind: opLoad, v: 2}, {kind: opLoad, v: 0}},
		{{kind: opLoad, v: 0}, {kind: opTxn, v: 0, arg: 2}, {kind: opTxn, v: 0, arg: 2}}})
	// Thread 2's tag at the root forced its transaction to commit, and
	// thread 2 then slept in thread 3's subtree, where its abort was
	// needed (a narrowed subtree puts its thread to sleep nowhere).
	check("a narrowed subtree", [][]op{{{kind: opLoad, v: 2}},
		{{kind: opLoad, v: 0}, {kind: opTxn, v: 2, arg: 1}, {kind: opCond, v: 2, arg: 1}},
		{{kind: opLoad, v: 2}, {kind: opTxn, v: 2, arg: 1}}})
	// Thread 3 ran at node 2 only under a set that forced its transaction
	// to commit; a later race whose initial it was took that run for its
	// reversal, and the state where it aborted was missed (a narrowed
	// run is not a race's initial's).
	check("a narrowed initial", [][]op{{{kind: opLoad, v: 2}, {kind: opSet, v: 0, arg: 2}},
		{{kind: opLoad, v: 2}, {kind: opAdd, v: 0, arg: 2}},
		{{kind: opLoad, v: 1}, {kind: opAdd, v: 2, arg: 1}, {kind: opTxn, v: 0, arg: 1}}})
	for _, c := range []struct {
		name string
		seed [2]uint64
		gen  func(*rand.Rand) [][]op
	}{
		{"TestOptimalTransactions' program", [2]uint64{21, 22}, txnProgram},
		{"TestSelfAbortStops's program", [2]uint64{31, 32}, guardProgram},
	} {
		r := rand.New(rand.NewPCG(c.seed[0], c.seed[1]))
		for n := range *retryPrograms {
			check(fmt.Sprintf("%s %d", c.name, n), c.gen(r))
		}
	}
	for key := range knownMisses {
		var n int
		fmt.Sscanf(key[strings.LastIndexByte(key[:strings.IndexByte(key, ',')], ' ')+1:], "%d", &n)
		if n < *retryPrograms && !missed[key] {
			t.Errorf("%s: retry sets now reach every final state: drop it from knownMisses and RetrySetsCaveat", key)
		}
	}
}

// knownMisses: the random programs, each with the sleep-set variant, on
// which retry sets miss a final state (-retry.programs 1000 reaches
// them). Program 338 misses one that the thesis's check reaches without
// retry sets, with or without the stop at a self-abort; shrunk,
// [[{0 1 0} {8 2 1}] [{0 0 0} {13 2 1} {13 1 1}] [{0 2 0} {13 1 2}]]:
// the missed state needs thread 2's first transaction to abort though
// nothing conflicts with it (not traced further).
// (Program 841 was the stop at a self-abort trusting an asleep abort,
// which plain dpor missed too: TestSelfAbortStops's "asleep abort".)
var knownMisses = map[string]bool{
	"TestSelfAbortStops's program 338, the thesis's check": true,
}

var retryPrograms = flag.Int("retry.programs", 5, "TestRetrySetsReachEveryFinalState: how many random programs of each kind")

// TestRetrySetAlgebra: minus and uncovered against brute force. Every
// assignment of results to two threads' first three passes is in s and
// not in e exactly when it is in one part of minus(s, e), parts that are
// disjoint and within s; uncovered(s, es) is s less each of es.
func TestRetrySetAlgebra(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	randCons := func() retryCons {
		c := retryCons{}
		for _, th := range []record.TID{1, 2} {
			if r.IntN(3) == 0 {
				continue
			}
			tc := threadCons{wait: r.IntN(2) == 0}
			for range r.IntN(4) {
				tc.res = append(tc.res, []uint8{resSuccess, resAbort, resResults}[r.IntN(3)])
			}
			c[th] = tc
		}
		return c
	}
	in := func(c retryCons, a [2][3]uint8) bool {
		for i, th := range []record.TID{1, 2} {
			for k, v := range a[i] {
				if c.at(th, k)&v == 0 {
					return false
				}
			}
		}
		return true
	}
	var all [][2][3]uint8
	for m := range 1 << 6 {
		var a [2][3]uint8
		for b := range 6 {
			a[b/3][b%3] = resSuccess << (m >> b & 1)
		}
		all = append(all, a)
	}
	for range 2000 {
		s, es := randCons(), []retryCons{randCons(), randCons()}
		parts := uncovered(s, es)
		single := minus(s, es[0])
		for _, a := range all {
			n, n1 := 0, 0
			for _, p := range parts {
				if in(p, a) {
					n++
				}
			}
			for _, p := range single {
				if in(p, a) {
					n1++
				}
			}
			want := in(s, a) && !in(es[0], a)
			if n1 > 1 || (n1 == 1) != want {
				t.Fatalf("minus(%v, %v) = %v: assignment %v in %d parts, want in s less e: %v", s, es[0], single, a, n1, want)
			}
			want = want && !in(es[1], a)
			if n > 1 || (n == 1) != want {
				t.Fatalf("uncovered(%v, %v) = %v: assignment %v in %d parts, want %v", s, es, parts, a, n, want)
			}
		}
		if covers(es[0], s) != (len(single) == 0) {
			t.Fatalf("covers(%v, %v) = %v, but minus leaves %v", es[0], s, covers(es[0], s), single)
		}
	}
}
