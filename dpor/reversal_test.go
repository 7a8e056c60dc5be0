package dpor

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"landslide/record"
)

// reversalRun runs the reversal strategy to its end and returns each
// walk's choices and the result.
func reversalRun(t *testing.T, prog [][]op, seed uint64) ([][]record.Choice, []*record.Transition, *Result) {
	t.Helper()
	var walks [][]record.Choice
	var base []*record.Transition
	opt := Options{Spec: Spec{Strategy: "reversal", Seed: seed}, OnBranch: func(b *Branch) Stop {
		walks = append(walks, slices.Clone(b.Choices))
		if b.N == 1 {
			base = slices.Clone(b.Transitions)
		}
		return Continue
	}}
	opt.KeepGoing = true
	x, err := New(newModel(prog...), opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return walks, base, res
}

// TestReversalWalks checks the reversal strategy against an independent
// reading of its definition, on random lock-free programs (no thread
// enables or disables another, so every two conflicting accesses of two
// threads are a pair the walks reverse): walk 1 is the
// machine's default schedule; every other walk follows it up to one node,
// runs another thread there, and then the default schedule again; the
// (node, thread) of those walks are, each exactly once, the pairs (i,
// T(tj)) for every two conflicting accesses of different threads in
// transitions i < j of walk 1 (computed here from the accesses); the
// first pass has one thread per node (the model's threads all stand at
// the same place), in node order; and the exploration then stops, not
// complete and not a verification. With --seed k the walks after the
// first are the same, from the k-th on.
func TestReversalWalks(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 5))
	for n := 0; n < 200; n++ {
		prog := lockFreeProgram(r)
		walks, base, res := reversalRun(t, prog, 0)
		if res.Complete || !res.Restricted || res.Stopped != StopRestricted || res.Bug != nil {
			t.Fatalf("program %d: complete %v, restricted %v, stopped %v", n, res.Complete, res.Restricted, res.Stopped)
		}
		// Walk 1: the default schedule.
		m := newModel(prog...)
		for k, c := range walks[0] {
			if d := m.Default(); d.Thread != c.Thread {
				t.Fatalf("program %d: walk 1 ran %d at %d, the default is %d", n, c.Thread, k, d.Thread)
			}
			if _, err := m.Step(c); err != nil {
				t.Fatal(err)
			}
		}
		// The candidates, from the accesses.
		type cand struct {
			node int
			t    record.TID
		}
		want := map[cand]bool{}
		for i := range base {
			for j := i + 1; j < len(base); j++ {
				if base[i].Thread == base[j].Thread || !accessesConflict(base[i], base[j]) {
					continue
				}
				want[cand{i, base[j].Thread}] = true
			}
		}
		got := map[cand]bool{}
		var order []cand
		for w, ch := range walks[1:] {
			d := 0
			for d < len(ch) && d < len(walks[0]) && ch[d] == walks[0][d] {
				d++
			}
			c := cand{d, ch[d].Thread}
			if got[c] {
				t.Fatalf("program %d: walk %d repeats (%d, %d)", n, w+2, c.node, c.t)
			}
			got[c] = true
			order = append(order, c)
			m := newModel(prog...)
			for k, c := range ch {
				if d := m.Default(); k > order[len(order)-1].node && d.Thread != c.Thread {
					t.Fatalf("program %d: walk %d ran %d at %d after its deviation, the default is %d", n, w+2, c.Thread, k, d.Thread)
				}
				if _, err := m.Step(c); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(got) != len(want) {
			t.Fatalf("program %d %v: %d walks after the base, want %d: got %v want %v", n, prog, len(got), len(want), got, want)
		}
		for c := range want {
			if !got[c] {
				t.Fatalf("program %d: no walk runs %d at node %d", n, c.t, c.node)
			}
		}
		// The first pass: one per node, in node order; then the rest in order.
		nodes := map[int]bool{}
		k := 0
		for ; k < len(order) && !nodes[order[k].node]; k++ {
			nodes[order[k].node] = true
			if k > 0 && order[k].node <= order[k-1].node {
				t.Fatalf("program %d: first pass out of order: %v", n, order)
			}
		}
		if len(nodes) != len(func() map[int]bool {
			s := map[int]bool{}
			for c := range want {
				s[c.node] = true
			}
			return s
		}()) {
			t.Fatalf("program %d: the first pass %v misses a node", n, order[:k])
		}
		for ; k+1 < len(order); k++ {
			if a, b := order[k], order[k+1]; a.node > b.node || a.node == b.node && a.t >= b.t {
				t.Fatalf("program %d: second pass out of order: %v", n, order)
			}
		}
		if len(walks) > 3 {
			from, _, _ := reversalRun(t, prog, 2)
			if !slices.EqualFunc(from[1:], walks[3:], func(a, b []record.Choice) bool { return slices.Equal(a, b) }) || !slices.Equal(from[0], walks[0]) {
				t.Fatalf("program %d: --seed 2 does not go on from the third candidate", n)
			}
		}
	}
}

// accessesConflict reports whether two transitions touch a common byte,
// one of them writing it.
func accessesConflict(a, b *record.Transition) bool {
	for _, x := range a.Accesses {
		for _, y := range b.Accesses {
			if (x.Write || y.Write) && x.Addr < y.Addr+uint64(y.Size) && y.Addr < x.Addr+uint64(x.Size) {
				return true
			}
		}
	}
	return false
}

// TestReversalResume: stopped after any walk and resumed from its stored
// frontier, the reversal walks go on exactly as without the stop.
func TestReversalResume(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 6))
	for n := 0; n < 30; n++ {
		prog := lockFreeProgram(r)
		opt := Options{Spec: Spec{Strategy: "reversal"}}
		want, _ := interrupted(t, prog, opt, nil, false)
		for _, stops := range [][]int{{1}, {2}, {1, 3, 4}} {
			got, res := interrupted(t, prog, opt, stops, stops[0] == 2)
			if !slices.Equal(got, want) || res.Stopped != StopRestricted {
				t.Fatalf("program %d, stops %v: %q, want %q (stopped %v)", n, stops, got, want, res.Stopped)
			}
		}
	}
}

// TestReversalFrontierDamaged: a stored reversal state that does not fit
// its base is an ErrFrontier, not a panic.
func TestReversalFrontierDamaged(t *testing.T) {
	s := &reversalStrategy{}
	for _, st := range []*ReversalState{
		{Base: nil, Candidates: nil},
		{Base: []record.Choice{{Thread: 1}}, Candidates: []ReversalCandidate{{Node: 1, Thread: 2}}},
		{Base: []record.Choice{{Thread: 1}}, Candidates: []ReversalCandidate{{Node: 0, Thread: 1}}},
		{Base: []record.Choice{{Thread: 1}}, Candidates: []ReversalCandidate{{Node: -1, Thread: 2}}},
	} {
		if err := s.load(&Frontier{Executed: 1, Reversal: st}); err == nil {
			t.Errorf("%+v loaded", st)
		}
	}
	if err := s.load(&Frontier{Executed: 1}); err == nil {
		t.Error("a reversal frontier without its state loaded")
	}
}
