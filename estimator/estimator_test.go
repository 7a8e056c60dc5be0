package estimator

import (
	"math"
	"testing"
	"time"
)

// TestThesisWorkedExample replays the thesis's worked example (§3.4.3,
// "Example"): the DPOR exploration of Figure 3.6 (two threads, each
// tmp=x; tmp++; x=tmp, every event a PP), 1 second per transition, six
// branches A, B, C, K, L, M. The thesis gives the estimates after each
// branch: WBE 4, 5.33, 6, 5.33, 5.7, 6 interleavings; RE 20, 24, 24, 22,
// 24, 24 seconds. The tags (F1…F5) are placed where the thesis's figures
// put them; the dpor package's own test checks that DPOR places them so.
func TestThesisWorkedExample(t *testing.T) {
	const s = time.Second
	var p Path
	pushN := func(n int) {
		for i := 0; i < n; i++ {
			p.Push(s)
		}
	}
	type want struct {
		name string
		size float64
		time float64
	}
	check := func(w want) {
		t.Helper()
		e := p.Leaf()
		if math.Abs(e.Size-w.size) > 0.01 {
			t.Errorf("after %s: WBE %.3f, thesis %.2f", w.name, e.Size, w.size)
		}
		if got := e.Total.Seconds(); math.Abs(got-w.time) > 1e-9 {
			t.Errorf("after %s: RE %.3f s, thesis %.0f s", w.name, got, w.time)
		}
	}

	// A: T1 T1 T1 T2 T2 T2. DPOR tags F3 (T2 at the root) and F1 (T2
	// after tmp1++, depth 2).
	p.Push(0)
	pushN(6)
	p.SetMarked(0, 2)
	p.SetMarked(2, 2)
	check(want{"A", 4, 20})

	// B: back to depth 2, T2 T2 T2 T1. Tags F2 (T1 after tmp2++, depth 4).
	p.Backtrack(2)
	pushN(4)
	p.SetMarked(4, 2)
	check(want{"B", 16.0 / 3, 24})

	// C: back to depth 4: T1 T2. Nothing new.
	p.Backtrack(4)
	pushN(2)
	check(want{"C", 6, 24})

	// K: back to the root: T2 T2 T2 T1 T1 T1. Tags F4 (depth 2).
	p.Backtrack(0)
	pushN(6)
	p.SetMarked(2, 2)
	check(want{"K", 16.0 / 3, 22})

	// L: back to depth 2: T1 T1 T1 T2. Tags F5 (depth 4).
	p.Backtrack(2)
	pushN(4)
	p.SetMarked(4, 2)
	check(want{"L", 40.0 / 7, 24})

	// M: back to depth 4: T2 T1.
	p.Backtrack(4)
	pushN(2)
	check(want{"M", 6, 24})

	e := p.Current()
	if e.Proportion != 1 || e.Branches != 6 {
		t.Errorf("at the end: proportion %v over %d branches, want 1 over 6", e.Proportion, e.Branches)
	}
	// 6 + 4 + 2 + 6 + 4 + 2 transitions of 1 s were executed.
	if e.Elapsed != 24*s || e.ETA() != 0 {
		t.Errorf("elapsed %v, ETA %v; want 24s and 0", e.Elapsed, e.ETA())
	}
}

// TestFullTreeExact: on a complete binary tree of depth d explored with
// every child marked up front, both estimators are exact from the first
// branch (a uniform tree is what they assume).
func TestFullTreeExact(t *testing.T) {
	const d = 5
	var p Path
	p.Push(0)
	for i := 0; i < d; i++ {
		p.Push(time.Millisecond)
	}
	for i := 0; i < d; i++ {
		p.SetMarked(i, 2)
	}
	e := p.Leaf()
	wantTime := 0.0
	for i := 1; i <= d; i++ {
		wantTime += math.Pow(2, float64(i)) // 2^i edges at depth i
	}
	if e.Size != 32 || e.Total != time.Duration(wantTime)*time.Millisecond {
		t.Fatalf("size %v total %v; want 32 and %v ms", e.Size, e.Total, wantTime)
	}
}
