package dpor

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"landslide/fixtures"
	"landslide/kernel"
	"landslide/record"
)

// classBySort is Explorer.class as it was written first: the branch
// sorted by thread, a map of ordinals, each transition's dependencies
// sorted. class walks the analysis's chains instead; both must hash the
// same bytes.
func classBySort(x *Explorer) [16]byte {
	a := &x.an
	n := len(x.trs)
	ord := make([]int32, n)
	count := map[record.TID]int32{}
	idx := make([]int, n)
	for j, tr := range x.trs[:n] {
		ord[j] = count[tr.Thread]
		count[tr.Thread]++
		idx[j] = j
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(x.trs[i].Thread, x.trs[j].Thread) })
	var buf []byte
	put := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	type dep struct {
		t   record.TID
		ord int32
	}
	var deps []dep
	for _, j := range idx {
		tr := x.trs[j]
		put(uint64(tr.Thread))
		put(uint64(ord[j]))
		put(uint64(x.choiceValue(j)))
		for _, k := range a.keys[j] {
			put(k.key)
			put(uint64(k.r) | uint64(k.w)<<8)
		}
		deps = deps[:0]
		for s, v := range a.full[j] {
			if t := a.slots[s]; v >= 0 && t != tr.Thread {
				deps = append(deps, dep{t, ord[v]})
			}
		}
		slices.SortFunc(deps, func(p, q dep) int { return cmp.Compare(p.t, q.t) })
		put(uint64(len(deps)))
		for _, d := range deps {
			put(uint64(d.t))
			put(uint64(d.ord))
		}
	}
	sum := sha256.Sum256(buf)
	return [16]byte(sum[:16])
}

// TestClassMatchesSort: the trace class of every branch (complete,
// sleep-set blocked, failing) equals the sort-based computation's, on
// random programs of every kind (nondet values, transactions) under
// dpor and optimal DPOR, and on a reference program with threads
// created and exiting.
func TestClassMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	branches := 0
	check := func(b *Branch) Stop {
		branches++
		if got, want := b.Class(), classBySort(b.x); got != want {
			t.Fatalf("branch %v: class %x, by sorting %x", b.Choices, got, want)
		}
		return Continue
	}
	for n := 0; n < 30; n++ {
		var prog [][]op
		switch n % 3 {
		case 0:
			prog = randomProgram(r)
		case 1:
			prog = withNondet(r, lockFreeProgram(r), 2)
		default:
			prog = txnProgram(r)
		}
		for _, strat := range []string{"dpor", "optimal"} {
			explore(t, newModel(prog...), Options{Spec: Spec{Strategy: strat, MaxInterleavings: 500, KeepGoing: true}, OnBranch: check})
		}
	}
	f, img, err := fixtures.Load("ref/paraguay")
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(img, kernel.Config{Args: []string{f.Path()}, SyncPPs: []string{"mutex_lock", "mutex_unlock"}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := New(k, Options{Spec: Spec{Strategy: "optimal", MaxInterleavings: 300, KeepGoing: true}, OnBranch: check})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if branches < 1000 {
		t.Fatalf("only %d branches compared", branches)
	}
}
