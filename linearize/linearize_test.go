package linearize

import (
	"math/rand/v2"
	"slices"
	"testing"

	"landslide/record"
)

const empty = ^uint64(0) // a dequeue of an empty queue returns -1

// queueSpec learns a FIFO queue's specification the Line-Up way: every
// order of the calls (each thread's in program order), run one at a time
// on a sequential queue.
func queueSpec(t *testing.T, threads [][]Call) *Spec {
	t.Helper()
	s := &Spec{}
	var rec func(next []int, order []Call)
	rec = func(next []int, order []Call) {
		done := true
		for th := range threads {
			if next[th] < len(threads[th]) {
				done = false
				c := threads[th][next[th]]
				next[th]++
				rec(next, append(order, c))
				next[th]--
			}
		}
		if !done {
			return
		}
		var q []uint64
		run := slices.Clone(order)
		for i := range run {
			run[i].Done = true
			switch run[i].Op {
			case "enqueue":
				q = append(q, run[i].Arg)
				run[i].Result = 0
			case "dequeue":
				if len(q) == 0 {
					run[i].Result = empty
				} else {
					run[i].Result, q = q[0], q[1:]
				}
			}
		}
		if err := s.Add(run); err != nil {
			t.Fatal(err)
		}
	}
	rec(make([]int, len(threads)), nil)
	return s
}

func call(th record.TID, idx int, op string, arg, res uint64) Call {
	return Call{Thread: th, Index: idx, Op: op, Arg: arg, Result: res, Done: true}
}

func after(n int, pairs ...[2]int) [][]bool {
	a := make([][]bool, n)
	for i := range a {
		a[i] = make([]bool, n)
	}
	for _, p := range pairs {
		a[p[0]][p[1]] = true
	}
	return a
}

// hist is a history with After (some transition after) and Precedes
// (entirely before in every equivalent interleaving) given as pairs.
func hist(calls []Call, afterPairs, precedes [][2]int) *History {
	h := &History{Calls: calls, After: after(len(calls), afterPairs...), Precedes: after(len(calls), precedes...)}
	for _, p := range precedes {
		h.After[p[0]][p[1]] = true
	}
	return h
}

// TestDependencyRules: an enqueue(1) and a dequeue that returned empty.
// The enqueue entirely before the dequeue in every equivalent
// interleaving: the enqueue must come first, and then the dequeue cannot
// be empty: not linearizable. One-way but overlapping (the dequeue read
// what the enqueue wrote before the dequeue returned, but may have begun
// first), and mutual: the dequeue may come first: linearizable. None:
// both orders must explain it, and enqueue-first does not: not
// linearizable (some equivalent interleaving runs the enqueue entirely
// first).
func TestDependencyRules(t *testing.T) {
	enq := call(1, 0, "enqueue", 1, 0)
	deq := call(2, 0, "dequeue", 0, empty)
	spec := queueSpec(t, [][]Call{{enq}, {deq}})
	for _, c := range []struct {
		name            string
		after, precedes [][2]int
		ok              bool
	}{
		{"precedes", nil, [][2]int{{0, 1}}, false},
		{"reverse precedes", nil, [][2]int{{1, 0}}, true},
		{"one-way, overlapping", [][2]int{{0, 1}}, nil, true},
		{"mutual", [][2]int{{0, 1}, {1, 0}}, nil, true},
		{"none", nil, nil, false},
	} {
		v, err := spec.Check(hist([]Call{enq, deq}, c.after, c.precedes))
		if err != nil {
			t.Fatal(err)
		}
		if v.OK != c.ok {
			t.Errorf("%s: linearizable %v, want %v (%s)", c.name, v.OK, c.ok, v.Reason)
		}
		if !v.OK && (len(v.Offending) != 1 || v.Offending[0] != 1 || v.Expected[0] != 1) {
			t.Errorf("%s: offending %v expected %v, want the dequeue (call 1), which would return 1", c.name, v.Offending, v.Expected)
		}
	}
	// The dequeue returned 1: explained by enqueue-first; with no
	// dependency the dequeue-first order must explain it too, and it
	// does not.
	deq1 := call(2, 0, "dequeue", 0, 1)
	for _, c := range []struct {
		precedes [][2]int
		ok       bool
	}{{[][2]int{{0, 1}}, true}, {nil, false}} {
		v, _ := spec.Check(hist([]Call{enq, deq1}, nil, c.precedes))
		if v.OK != c.ok {
			t.Errorf("dequeue → 1, precedes %v: linearizable %v, want %v", c.precedes, v.OK, c.ok)
		}
	}
}

// TestEquivalentTracesSameVerdict: equivalent interleavings begin their
// calls in different orders but have the same dependencies and results;
// the verdict does not depend on the order the calls are listed in.
func TestEquivalentTracesSameVerdict(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for n := 0; n < 300; n++ {
		h, spec := randomHistory(t, r)
		v, err := spec.Check(h)
		if err != nil {
			t.Fatal(err)
		}
		perm := r.Perm(len(h.Calls))
		p := &History{Calls: make([]Call, len(perm)), After: after(len(perm)), Precedes: after(len(perm))}
		for i, a := range perm {
			p.Calls[i] = h.Calls[a]
			for j, b := range perm {
				p.After[i][j] = h.After[a][b]
				p.Precedes[i][j] = h.Precedes[a][b]
			}
		}
		w, err := spec.Check(p)
		if err != nil {
			t.Fatal(err)
		}
		if v.OK != w.OK {
			t.Fatalf("history %d: verdict %v, listed in another order %v", n, v.OK, w.OK)
		}
	}
}

// randomHistory: 2 or 3 threads of 1 or 2 queue calls, random results
// (from the small domain the calls can give) and random dependencies.
func randomHistory(t *testing.T, r *rand.Rand) (*History, *Spec) {
	nt := 2 + r.IntN(2)
	var threads [][]Call
	var calls []Call
	for th := 1; th <= nt; th++ {
		var cs []Call
		for k := 0; k < 1+r.IntN(2); k++ {
			c := call(record.TID(th), k, "enqueue", uint64(th*10+k), 0)
			if r.IntN(2) == 0 {
				c = call(record.TID(th), k, "dequeue", 0, 0)
			}
			cs = append(cs, c)
		}
		threads = append(threads, cs)
		calls = append(calls, cs...)
	}
	for i := range calls {
		if calls[i].Op == "dequeue" {
			// empty, or some enqueued value
			vals := []uint64{empty}
			for _, c := range calls {
				if c.Op == "enqueue" {
					vals = append(vals, c.Arg)
				}
			}
			calls[i].Result = vals[r.IntN(len(vals))]
		}
	}
	a, pr := after(len(calls)), after(len(calls))
	for i := range calls {
		for j := range calls {
			if i != j && calls[i].Thread != calls[j].Thread && r.IntN(3) == 0 {
				a[i][j] = true
				if r.IntN(2) == 0 && !pr[j][i] {
					pr[i][j] = true
				}
			}
		}
	}
	return &History{Calls: calls, After: a, Precedes: pr}, queueSpec(t, threads)
}

// bruteForce is the definition, computed another way: over every
// permutation of the calls, those that respect the forced order and give
// the results; some must exist, and for each independent pair, one with
// each call of the pair first.
func bruteForce(h *History, s *Spec) bool {
	n := len(h.Calls)
	before := func(i, j int) bool { // forced: i before j
		ci, cj := &h.Calls[i], &h.Calls[j]
		if ci.Thread == cj.Thread {
			return ci.Index < cj.Index
		}
		return h.Precedes[i][j]
	}
	var none [][2]int
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if h.Calls[i].Thread != h.Calls[j].Thread && !h.After[i][j] && !h.After[j][i] {
				none = append(none, [2]int{i, j})
			}
		}
	}
	// every permutation, once
	var perms [][]int
	var gen func(p []int, used []bool)
	gen = func(p []int, used []bool) {
		if len(p) == n {
			perms = append(perms, slices.Clone(p))
			return
		}
		for c := 0; c < n; c++ {
			if !used[c] {
				used[c] = true
				gen(append(p, c), used)
				used[c] = false
			}
		}
	}
	gen(nil, make([]bool, n))
	var valid [][]int // positions
	for _, p := range perms {
		pos := make([]int, n)
		for k, c := range p {
			pos[c] = k
		}
		fits := true
		for i := 0; i < n && fits; i++ {
			for j := 0; j < n; j++ {
				if i != j && before(i, j) && pos[i] > pos[j] {
					fits = false
					break
				}
			}
		}
		if fits && s.mismatches(h.Calls, p) == 0 {
			valid = append(valid, pos)
		}
	}
	if len(valid) == 0 {
		return false
	}
	for _, q := range none {
		first, second := false, false
		for _, pos := range valid {
			if pos[q[0]] < pos[q[1]] {
				first = true
			} else {
				second = true
			}
		}
		if !first || !second {
			return false
		}
	}
	return true
}

// TestAgainstBruteForce: Check agrees with the definition computed by
// brute force on random histories, and both verdicts occur.
func TestAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	seen := map[bool]int{}
	for n := 0; n < 500; n++ {
		h, spec := randomHistory(t, r)
		v, err := spec.Check(h)
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteForce(h, spec); v.OK != want {
			t.Fatalf("history %d %+v: Check says %v, brute force %v", n, h, v.OK, want)
		}
		seen[v.OK]++
	}
	if seen[true] < 50 || seen[false] < 50 {
		t.Fatalf("verdicts %v: the random histories do not exercise both", seen)
	}
}

// TestSpecErrors: a specification whose runs of one order disagree is
// not deterministic; a call that never returned cannot be checked.
func TestSpecErrors(t *testing.T) {
	s := &Spec{}
	a := []Call{call(1, 0, "get", 0, 1)}
	if err := s.Add(a); err != nil {
		t.Fatal(err)
	}
	b := []Call{call(1, 0, "get", 0, 2)}
	if err := s.Add(b); err == nil {
		t.Fatal("two results for one order: no error")
	}
	pending := Call{Thread: 1, Op: "get"}
	if _, err := s.Check(&History{Calls: []Call{pending}, After: after(1), Precedes: after(1)}); err == nil {
		t.Fatal("a call that never returned: no error")
	}
}
