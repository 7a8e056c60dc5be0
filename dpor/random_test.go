package dpor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"landslide/record"
	"landslide/schedule"
)

// TestRandomWalksAreRunSeeds: walk k of the random strategy with seed S is
// the schedule `landslide run --seed S+k-1` plays (schedule.Random on a
// fresh machine), and an exploration stopped and resumed from its
// frontier goes on with the same walks.
func TestRandomWalksAreRunSeeds(t *testing.T) {
	prog := [][]op{
		{{kind: opLoad}, {kind: opInc}, {kind: opStore}},
		{{kind: opLoad}, {kind: opInc}, {kind: opStore}},
		{{kind: opLoad, v: 1}, {kind: opStore}},
	}
	const seed, walks = 41, 30
	want := runSeeds(t, prog, seed, walks)
	opt := Options{Spec: Spec{Strategy: "random", Seed: seed, MaxInterleavings: walks}}
	got := explore(t, newModel(prog...), opt)
	if len(got.schedules) != walks || got.res.Complete {
		t.Fatalf("%d walks, complete %v; want %d, never complete", len(got.schedules), got.res.Complete, walks)
	}
	// Random walks do not enumerate the tree: the size estimate would be
	// nonsense (walks re-run paths), so none is given; DPOR's is.
	if e := got.res.Estimate; e.Proportion != 0 || e.Size != 0 || e.Total != 0 || e.Branches != walks {
		t.Errorf("random walks: estimate %+v, want none (%d branches)", e, walks)
	}
	if e := explore(t, newModel(prog...), Options{}).res.Estimate; e.Proportion != 1 || e.Size <= 0 {
		t.Errorf("dpor: estimate %+v, want the whole tree", e)
	}
	distinct := map[string]bool{}
	for k := range want {
		if got.schedules[k] != want[k] {
			t.Fatalf("walk %d: %s, `run --seed %d` plays %s", k+1, got.schedules[k], seed+k, want[k])
		}
		distinct[want[k]] = true
	}
	if len(distinct) < 5 {
		t.Fatalf("only %d distinct walks in %d: not random", len(distinct), walks)
	}
	resumed, res := interrupted(t, prog, opt, []int{1, 7, 8, 20}, false)
	if len(resumed) != walks || res.Stopped != StopLimit {
		t.Fatalf("resumed: %d walks, stopped %s", len(resumed), res.Stopped)
	}
	for k := range want {
		if resumed[k] != want[k] {
			t.Fatalf("resumed walk %d: %s, want %s", k+1, resumed[k], want[k])
		}
	}
}

// runSeeds is what `landslide run --seed` plays with seeds seed to
// seed+walks-1 (schedule.Random on a fresh machine each).
func runSeeds(t *testing.T, prog [][]op, seed uint64, walks int) []string {
	t.Helper()
	var out []string
	for k := range walks {
		cs, _, err := schedule.Play(newModel(prog...), schedule.NewRandom(seed+uint64(k)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, schedString(cs))
	}
	return out
}

// TestRandomRejectsOtherParams: the random strategy takes a seed only;
// the others take none.
func TestRandomRejectsOtherParams(t *testing.T) {
	m := newModel([]op{{kind: opLoad}})
	for _, s := range []Spec{{Strategy: "random", NoSleepSets: true}, {Strategy: "random", MaxBound: Bound(1)}, {Strategy: "dpor", Seed: 3}, {Strategy: "walk"}} {
		if _, err := New(m, Options{Spec: s}); err == nil {
			t.Errorf("%+v: accepted", s)
		}
	}
	x, err := New(m, Options{Spec: Spec{Strategy: "random", Seed: 3, MaxInterleavings: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestWalksWithTransactions: on a program with transactions, random and
// PCT walks flip a coin for each _xbegin they run (some walks abort a
// transaction, some commit it; none under STM), and each walk is a walk
// from the root: the explorer's injected aborts used to make the next
// "walk" continue the last one from its deepest _xbegin, so the first
// walks only varied their last transactions. Random walk k is still
// `landslide run --seed SEED+k-1` (schedule.Random on a fresh machine),
// and an exploration stopped and resumed goes on with the same walks.
// The final state where both transactions aborted (x = 0) is one that
// needs two coins.
func TestWalksWithTransactions(t *testing.T) {
	prog := [][]op{
		{{kind: opLoad, v: 1}, {kind: opTxn, v: 0, arg: 1}, {kind: opFallback, v: 0, arg: 1}},
		{{kind: opLoad, v: 1}, {kind: opTxn, v: 0, arg: 2}, {kind: opLoad}},
	}
	const seed, walks = 5, 40
	want := runSeeds(t, prog, seed, walks)
	for _, s := range []string{"random", "pct"} {
		opt := Options{Spec: Spec{Strategy: s, Seed: seed, MaxInterleavings: walks}}
		m := newModel(prog...)
		bothAborted := false
		got := explore(t, m, Options{Spec: opt.Spec, OnBranch: func(*Branch) Stop {
			bothAborted = bothAborted || m.st.reg[0] == 1 && m.st.reg[1] == 1
			return Continue
		}})
		aborts, none := 0, 0
		for _, w := range got.schedules {
			aborts += strings.Count(w, fmt.Sprintf(":%d", record.XabortRetry))
			if !strings.Contains(w, ":") {
				none++
			}
		}
		if len(got.schedules) != walks || aborts < walks/2 || none == 0 || !bothAborted {
			t.Errorf("%s: %d walks, %d aborts, %d walks without one, both aborted %v: %v", s, len(got.schedules), aborts, none, bothAborted, got.schedules)
		}
		if s == "random" && !slices.Equal(got.schedules, want) {
			t.Errorf("random walks:\n%v\n`run --seed` plays\n%v", got.schedules, want)
		}
		resumed, _ := interrupted(t, prog, opt, []int{1, 6, 7, 19}, false)
		if !slices.Equal(resumed, got.schedules) {
			t.Errorf("%s resumed:\n%v\nuninterrupted:\n%v", s, resumed, got.schedules)
		}
		stm := opt
		stm.AbortCodes, stm.STM = true, true
		if w := explore(t, newModel(prog...), stm).schedules; slices.ContainsFunc(w, func(s string) bool { return strings.Contains(s, ":") }) {
			t.Errorf("%s under STM: an abort: %v", s, w)
		}
	}
}
