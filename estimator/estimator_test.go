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

// tree is a synthetic execution tree: each edge is a transition of 1 s.
type tree struct{ kids []*tree }

// sleepTree(n) has n children, the j-th of which is sleepTree(n−1−j): the
// shape sleep sets give a node whose n threads all conflict, each later
// child with one more thread asleep (2^(n−1) branches, the first child
// holding half).
func sleepTree(n int) *tree {
	t := &tree{}
	for j := 0; j < n; j++ {
		t.kids = append(t.kids, sleepTree(n-1-j))
	}
	return t
}

// fullTree(b, d) has b children at every node down to depth d.
func fullTree(b, d int) *tree {
	t := &tree{}
	for j := 0; d > 0 && j < b; j++ {
		t.kids = append(t.kids, fullTree(b, d-1))
	}
	return t
}

func (t *tree) edges() int {
	n := 0
	for _, k := range t.kids {
		n += 1 + k.edges()
	}
	return n
}

// walk explores t depth-first with a Path as the explorer drives it.
// With lazy, a node's children are marked one at a time, as DPOR tags
// them (the next one when a branch through the last one completes),
// instead of all up front. visit sees the estimate after each branch.
func walk(t *tree, lazy bool, visit func(Estimate)) {
	var p Path
	p.Push(0)
	path, idx := []*tree{t}, []int{0}
	for {
		for n := path[len(path)-1]; len(n.kids) > 0; n = path[len(path)-1] {
			path, idx = append(path, n.kids[0]), append(idx, 0)
			p.Push(time.Second)
		}
		for d := range len(path) - 1 {
			m := len(path[d].kids)
			if lazy {
				m = min(idx[d]+2, m)
			}
			p.SetMarked(d, m)
		}
		visit(p.Leaf())
		d := len(path) - 2
		for d >= 0 && idx[d]+1 >= len(path[d].kids) {
			d--
		}
		if d < 0 {
			return
		}
		p.Backtrack(d)
		idx[d]++
		path, idx = append(path[:d+1], path[d].kids[idx[d]]), append(idx[:d+1], 0)
		p.Push(time.Second)
	}
}

// TestSiblingModel: on a tree whose later children are smaller (sleep
// sets: child j of a node with n children has n−1−j below it, and half
// the subtree of child j−1), the thesis's estimators over-estimate the
// total; the sibling model learns the ratio of consecutive siblings from
// the finished subtrees (Kappa, 1/2) and its totals are closer to the
// truth, from a tenth of the exploration on. At the end both are exact.
func TestSiblingModel(t *testing.T) {
	tr := sleepTree(14)
	truth := float64(tr.edges()) * float64(time.Second)
	var es []Estimate
	walk(tr, false, func(e Estimate) { es = append(es, e) })
	last := es[len(es)-1]
	if last.Elapsed != time.Duration(truth) || last.Total != last.Elapsed || last.ModelTotal != last.Elapsed || last.ModelProportion != 1 {
		t.Fatalf("at the end elapsed %v, RE %v, model %v (proportion %v); want all %v and 1",
			last.Elapsed, last.Total, last.ModelTotal, last.ModelProportion, time.Duration(truth))
	}
	if k := last.Kappa; math.Abs(k-0.5) > 0.05 {
		t.Errorf("ratio %.3f, want the tree's 1/2", k)
	}
	var worseRE, worseWBE, n int
	errOf := func(total float64) float64 { return math.Abs(math.Log(total / truth)) }
	for _, e := range es {
		if float64(e.Elapsed) < truth/10 || e.Elapsed == last.Elapsed {
			continue
		}
		n++
		if errOf(float64(e.ModelTotal)) > errOf(float64(e.Total)) {
			worseRE++
		}
		if errOf(float64(e.Elapsed)/e.ModelProportion) > errOf(float64(e.Elapsed)/e.Proportion) {
			worseWBE++
		}
	}
	if n < 1000 || worseRE > n/100 || worseWBE > n/100 {
		t.Errorf("the model is further from the truth than the thesis's estimators after %d (RE) and %d (WBE) of %d branches",
			worseRE, worseWBE, n)
	}
}

// TestSiblingModelUniform: on a uniform tree whose children are tagged
// up front, a node's later children are as big as its first: the sibling
// model learns a factor of exactly 1, and its estimates are the thesis's.
func TestSiblingModelUniform(t *testing.T) {
	n := 0
	walk(fullTree(3, 7), false, func(e Estimate) {
		n++
		if e.Kappa != 1 || e.ModelTotal != e.Total || math.Abs(e.ModelProportion-e.Proportion) > 1e-12 {
			t.Fatalf("branch %d: kappa %v, model %v %v, thesis %v %v", n, e.Kappa, e.ModelTotal, e.ModelProportion, e.Total, e.Proportion)
		}
	})
	if n != 2187 {
		t.Fatalf("%d branches, want 3^7", n)
	}
}
