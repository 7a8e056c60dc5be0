package dpor

import (
	"context"
	"testing"

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
	var want []string
	for k := 1; k <= walks; k++ {
		cs, _, err := schedule.Play(newModel(prog...), schedule.NewRandom(seed+uint64(k)-1))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, schedString(cs))
	}
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
