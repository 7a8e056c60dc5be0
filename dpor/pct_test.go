package dpor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"landslide/record"
)

// pctWalk is one PCT walk as the tests look at it.
type pctWalk struct {
	threads     []record.TID
	preempted   []bool
	preemptions int
}

// pctWalks runs the pct strategy on prog for walks walks, with the end
// state of each walk seen by end (if set).
func pctWalks(t *testing.T, prog [][]op, s Spec, walks int, end func(*model)) []pctWalk {
	t.Helper()
	s.Strategy, s.MaxInterleavings = "pct", walks
	m := newModel(prog...)
	var out []pctWalk
	s.KeepGoing = true
	opt := Options{Spec: s, OnBranch: func(b *Branch) Stop {
		w := pctWalk{preempted: slices.Clone(b.Preempted), preemptions: b.Preemptions}
		for _, c := range b.Choices {
			w.threads = append(w.threads, c.Thread)
		}
		out = append(out, w)
		if end != nil {
			end(m)
		}
		return Continue
	}}
	x, err := New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != walks || res.Complete || res.Stopped != StopLimit {
		t.Fatalf("%d walks, complete %v, stopped %q; want %d, never complete", len(out), res.Complete, res.Stopped, walks)
	}
	return out
}

// switchesAway counts the switches away from a thread that runs again
// later: in a lock-free model program, a thread is runnable until its
// last operation, so these are the walk's preemptions.
func switchesAway(ts []record.TID) int {
	n := 0
	for i := 1; i < len(ts); i++ {
		if ts[i] != ts[i-1] && slices.Contains(ts[i:], ts[i-1]) {
			n++
		}
	}
	return n
}

// threadOps is a thread of n lock-free operations on variable v.
func threadOps(v, n int) []op {
	var ops []op
	for len(ops) < n {
		ops = append(ops, op{kind: opLoad, v: v}, op{kind: opInc}, op{kind: opStore, v: v})
	}
	return ops[:n]
}

// TestPCTDeterministic: the same Seed and Depth run the same walks, bit for
// bit; Depth 0 is depth 3; another seed runs other walks; an exploration
// stopped and resumed from its (stored) frontier, with or without
// checkpoints, goes on with exactly the uninterrupted run's walks.
func TestPCTDeterministic(t *testing.T) {
	prog := [][]op{
		{{kind: opLoad}, {kind: opInc}, {kind: opStore}, {kind: opLock}, {kind: opLoad, v: 1}, {kind: opUnlock}},
		{{kind: opLoad}, {kind: opInc}, {kind: opStore}, {kind: opAdd, v: 2, arg: 1}},
		{{kind: opLock}, {kind: opLoad, v: 1}, {kind: opInc}, {kind: opStore, v: 1}, {kind: opUnlock}},
	}
	const walks = 60
	opt := Options{Spec: Spec{Strategy: "pct", Seed: 17, Depth: 3, MaxInterleavings: walks}}
	a := explore(t, newModel(prog...), opt)
	b := explore(t, newModel(prog...), opt)
	if len(a.schedules) != walks || a.res.Complete || a.res.Stopped != StopLimit {
		t.Fatalf("%d walks, complete %v, stopped %q", len(a.schedules), a.res.Complete, a.res.Stopped)
	}
	if !slices.Equal(a.schedules, b.schedules) {
		t.Fatalf("same spec, different walks:\n%v\n%v", a.schedules, b.schedules)
	}
	if e := a.res.Estimate; e.Proportion != 0 || e.Size != 0 {
		t.Errorf("sampling strategy: estimate %+v, want no size", e)
	}
	def := opt
	def.Depth = 0
	if d := explore(t, newModel(prog...), def); !slices.Equal(d.schedules, a.schedules) {
		t.Errorf("depth 0 is not depth 3:\n%v\n%v", d.schedules, a.schedules)
	}
	other := opt
	other.Seed = 18
	if o := explore(t, newModel(prog...), other); slices.Equal(o.schedules, a.schedules) {
		t.Errorf("seeds 17 and 18 ran the same walks")
	}
	distinct := map[string]bool{}
	for _, s := range a.schedules {
		distinct[s] = true
	}
	if len(distinct) < 10 {
		t.Errorf("only %d distinct walks in %d", len(distinct), walks)
	}
	for i, ck := range []bool{false, true} {
		var stops []int // after every other walk: each resumed walk redraws its start
		for w := 1 + i; w < walks; w += 2 {
			stops = append(stops, w)
		}
		got, res := interrupted(t, prog, opt, stops, ck)
		if !slices.Equal(got, a.schedules) || res.Stopped != StopLimit {
			t.Fatalf("resumed (checkpoints %v), stopped %q:\n%v\nuninterrupted:\n%v", ck, res.Stopped, got, a.schedules)
		}
	}
}

// TestPCTDepth1RunsThreadsInPriorityOrder: with depth 1 there is no change
// point, so each walk runs the threads one after the other, each to its
// end (nothing blocks: a thread never starts before the ones above it are
// done), in the order of their random priorities: every order of the three
// threads, each about equally often.
func TestPCTDepth1RunsThreadsInPriorityOrder(t *testing.T) {
	prog := [][]op{
		{{kind: opLock}, {kind: opLoad}, {kind: opInc}, {kind: opStore}, {kind: opUnlock}},
		{{kind: opLoad}, {kind: opInc}, {kind: opStore}},
		{{kind: opLock}, {kind: opAdd, arg: 2}, {kind: opUnlock}, {kind: opLoad, v: 1}},
	}
	const walks = 240
	orders := map[string]int{}
	for k, w := range pctWalks(t, prog, Spec{Seed: 5, Depth: 1}, walks, nil) {
		if w.preemptions != 0 || slices.Contains(w.preempted, true) {
			t.Fatalf("walk %d %v: %d preemptions", k+1, w.threads, w.preemptions)
		}
		var order []string
		for i, q := range w.threads {
			if i > 0 && q != w.threads[i-1] && slices.Contains(w.threads[i:], w.threads[i-1]) {
				t.Fatalf("walk %d %v: switched away from thread %d before its end", k+1, w.threads, w.threads[i-1])
			}
			if i == 0 || q != w.threads[i-1] {
				order = append(order, string('0'+rune(q)))
			}
		}
		orders[strings.Join(order, "")]++
	}
	t.Logf("thread orders in %d walks: %v", walks, orders)
	for _, o := range []string{"123", "132", "213", "231", "312", "321"} {
		if orders[o] < walks/6/2 {
			t.Errorf("order %s in %d of %d walks, want about %d", o, orders[o], walks, walks/6)
		}
	}
}

// TestPCTPreemptionsAtMostDepthMinus1: in a lock-free program (no thread
// becomes runnable during a walk) only change points preempt, so a walk of
// depth d has at most d-1 preemptions, and in 200 walks of a long enough
// program some have exactly d-1.
func TestPCTPreemptionsAtMostDepthMinus1(t *testing.T) {
	prog := [][]op{threadOps(0, 8), threadOps(1, 8), threadOps(2, 8)}
	const walks = 200
	for _, d := range []int{1, 2, 3, 4} {
		hist := make([]int, d)
		for k, w := range pctWalks(t, prog, Spec{Seed: 99, Depth: d}, walks, nil) {
			if w.preemptions > d-1 {
				t.Fatalf("depth %d, walk %d %v: %d preemptions", d, k+1, w.threads, w.preemptions)
			}
			if s := switchesAway(w.threads); s != w.preemptions {
				t.Fatalf("depth %d, walk %d %v: %d preemptions counted, %d switches away from a runnable thread", d, k+1, w.threads, w.preemptions, s)
			}
			hist[w.preemptions]++
		}
		t.Logf("depth %d: walks by preemptions %v", d, hist)
		if hist[d-1] == 0 {
			t.Errorf("depth %d: no walk with %d preemptions in %d", d, d-1, walks)
		}
	}
}

// TestPCTFindsDepth2BugAtTheoremRate: a lost update (x++ by two threads,
// x ending at 1) needs one ordering constraint beyond the first thread's
// choice (the other thread's load between the first's load and store): a
// depth-2 bug. PCT of depth 1 never finds it; of depth 2, in at least the
// fraction 1/(n·K) of the walks the theorem promises (n threads, K steps;
// asserted with a slack of 2).
func TestPCTFindsDepth2BugAtTheoremRate(t *testing.T) {
	prog := [][]op{threadOps(0, 3), threadOps(0, 3), threadOps(1, 6)}
	const walks = 400
	n, k := len(prog), 0
	for _, th := range prog {
		k += len(th)
	}
	for _, d := range []int{1, 2} {
		hits := 0
		pctWalks(t, prog, Spec{Seed: 2010, Depth: d}, walks, func(m *model) {
			if m.st.vars[0] != 2 {
				hits++
			}
		})
		rate, bound := float64(hits)/walks, 1/float64(n*k)
		t.Logf("depth %d: lost update in %d of %d walks (rate %.4f; theorem's bound for depth 2, 1/(n·K) = 1/(%d·%d) = %.4f)", d, hits, walks, rate, n, k, bound)
		if d == 1 && hits != 0 {
			t.Errorf("depth 1 (no change point) found a depth-2 bug %d times", hits)
		}
		if d == 2 && rate < bound/2 {
			t.Errorf("depth 2: rate %.4f, below half the theorem's bound %.4f", rate, bound)
		}
	}
}

// TestPCTRejectsBadParams: a depth outside 1..64 is refused, naming it, as
// are parameters PCT does not take; depths 1 and 64 run.
func TestPCTRejectsBadParams(t *testing.T) {
	m := newModel([]op{{kind: opLoad}}, []op{{kind: opStore}})
	for _, d := range []int{-1, 65, 1000} {
		_, err := New(m, Options{Spec: Spec{Strategy: "pct", Depth: d}})
		if want := fmt.Sprintf("pct: depth %d: want 1 to 64", d); err == nil || err.Error() != want {
			t.Errorf("depth %d: %v, want a refusal naming the depth", d, err)
		}
	}
	for _, s := range []Spec{{Strategy: "pct", NoSleepSets: true}, {Strategy: "pct", MaxBound: Bound(2)}, {Strategy: "pct", AllPairs: true}} {
		if _, err := New(m, Options{Spec: s}); err == nil || !strings.Contains(err.Error(), "pct") {
			t.Errorf("%+v: %v, want refused", s, err)
		}
	}
	for _, d := range []int{1, 64} {
		if w := pctWalks(t, [][]op{threadOps(0, 3), threadOps(0, 3)}, Spec{Seed: 1, Depth: d}, 5, nil); len(w) != 5 {
			t.Errorf("depth %d: %d walks", d, len(w))
		}
	}
}
