package check

import (
	"context"
	"slices"
	"testing"

	"landslide/quicksand"
)

// TestQuicksandWalksFindSetters: Problem 2's shape, written for this test
// (testdata/setters.c: nine setters writing a then b, one checker
// created last). With the interleaving clock and a budget of 20,000, the
// jobs alone never reach the bug ({ } alone has tens of thousands of
// interleavings, and the jobs that could find it never run); with the
// PCT walks on (the default share; slices of 300 walks, where a seed
// takes about 1,000 walks on average to find it), a walk finds it, as a job of its own whose
// walk `explore --strategy pct --seed S --depth d` reproduces over the
// same PP set: the same bug at the same walk.
func TestQuicksandWalksFindSetters(t *testing.T) {
	elf, image := buildTestdata(t, "setters", "")
	pps, err := ResolvePPs(image, PPRequest{Args: []string{elf}})
	if err != nil {
		t.Fatal(err)
	}
	spec := QuicksandSpec{Base: Spec{Program: elf, Kernel: pps.Kernel},
		Options: quicksand.Options{Budget: 20000, Deterministic: true, WalkSlice: 300}}
	run := func(share float64) *QuicksandResult {
		s := spec
		s.Options.WalkShare = share
		res, err := Quicksand(context.Background(), s, image, Recording{}, QuicksandHooks{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(-1); res.Verdict.Outcome != Budget || len(res.Bugs) != 0 {
		t.Fatalf("without walks: %s (%s), want the budget spent with no bug", res.Verdict.Outcome, res.Verdict.Message)
	}
	res := run(0)
	if res.Verdict.Outcome != Bug || len(res.Bugs) != 1 {
		t.Fatalf("with walks: %s (%s), want the bug", res.Verdict.Outcome, res.Verdict.Message)
	}
	s := res.Sched
	b := res.Bugs[0]
	j := s.Jobs[b.Job-1]
	if j.Walk == nil || b.Trace == nil || b.Trace.Replay == "" {
		t.Fatalf("the bug's job %+v (trace %v): want a walk's, with a replay command", j, b.Trace != nil)
	}
	t.Logf("%s at interleaving %d: %s", j.Origin, int64(b.FoundAt), b.PPSet)

	// The walk again, as explore runs it.
	funcs, pcs := s.Reg.Funcs(j.Set)
	for _, p := range j.Walk.Extra {
		pcs = append(pcs, p.PC)
	}
	slices.Sort(pcs)
	x := Spec{Program: elf, Kernel: pps.Kernel}
	x.Kernel.SyncPPs, x.Kernel.DataRacePCs = funcs, pcs
	x.Strategy, x.Seed, x.Depth, x.MaxInterleavings = "pct", j.Walk.Seed, j.Walk.Depth, j.Walk.Walk
	got, err := Explore(context.Background(), Config{Spec: x, Image: image}, Recording{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Bug == nil || got.Executed != j.Walk.Walk || got.Trace.Replay != b.Trace.Replay {
		t.Errorf("explore --strategy pct --seed %d --depth %d: bug %v after %d walks, replay %q; the walk's: %q after %d",
			j.Walk.Seed, j.Walk.Depth, got.Bug, got.Executed, got.Trace.Replay, b.Message, j.Walk.Walk)
	}
}
