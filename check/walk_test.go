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
// walks on (the default share; slices of 300 walks: race reversal's
// first, where the checker run between the first setter's writes finds
// it; a PCT seed takes about 1,000 walks on average), a walk finds it, as
// a job of its own whose walk `explore --strategy KIND --seed S --depth
// d` reproduces over the same PP set: the same bug at the same walk.
func TestQuicksandWalksFindSetters(t *testing.T) {
	res, replay := walksFind(t, "setters", nil, quicksand.Options{Budget: 20000, WalkSlice: 300})
	j := res.Sched.Jobs[res.Bugs[0].Job-1]
	t.Logf("%s at interleaving %d: %s", j.Origin, int64(res.Bugs[0].FoundAt), res.Bugs[0].PPSet)
	replay()
}

// walksFind runs Quicksand with the interleaving clock on
// testdata/NAME.c (with these arguments) without walks, where it must
// spend the budget with no bug, then with them (the default share),
// where it must find one bug, by a walk. It returns the second run, and
// a function that checks that the walk again, as explore runs it over
// the same PP set (`explore --strategy KIND --seed S --depth d`, stopped
// after the walk's number), finds the same bug at the same walk.
func walksFind(t *testing.T, name string, args []string, opt quicksand.Options) (*QuicksandResult, func()) {
	t.Helper()
	elf, image := buildTestdata(t, name, "")
	pps, err := ResolvePPs(image, PPRequest{Args: append([]string{elf}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	opt.Deterministic = true
	spec := QuicksandSpec{Base: Spec{Program: elf, Kernel: pps.Kernel}, Options: opt}
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
	return res, func() {
		t.Helper()
		funcs, pcs := s.Reg.Funcs(j.Set)
		for _, p := range j.Walk.Extra {
			pcs = append(pcs, p.PC)
		}
		slices.Sort(pcs)
		x := Spec{Program: elf, Kernel: pps.Kernel}
		x.Kernel.SyncPPs, x.Kernel.DataRacePCs = funcs, pcs
		x.Strategy, x.Seed, x.Depth, x.MaxInterleavings = j.Walk.Kind, j.Walk.Seed, j.Walk.Depth, j.Walk.Walk
		got, err := Explore(context.Background(), Config{Spec: x, Image: image}, Recording{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Bug == nil || got.Executed != j.Walk.Walk || got.Trace.Replay != b.Trace.Replay {
			t.Errorf("explore --strategy %s --seed %d --depth %d: bug %v after %d walks, replay %q; the walk's: %q after %d",
				j.Walk.Kind, j.Walk.Seed, j.Walk.Depth, got.Bug, got.Executed, got.Trace.Replay, b.Message, j.Walk.Walk)
		}
	}
}

// TestQuicksandReversalFindsTwoPhase: twostage_100's shape, written for
// this test (testdata/twophase.c, here with 12 writers in two locked
// phases, and one reader created last that fails only between the first
// writer's phases). With the interleaving clock and a budget of 5,000 the
// jobs alone never
// reach it (depth-first DPOR reverses the reader past one writer's second
// phase at a time, from the bottom); with the walks on, the first slice,
// race reversal's, finds it within its first few walks (the reader run
// at each node of the first writer's), as a job whose walk `explore
// --strategy reversal --seed S` reproduces: the same bug at the same walk.
func TestQuicksandReversalFindsTwoPhase(t *testing.T) {
	res, replay := walksFind(t, "twophase", []string{"12"}, quicksand.Options{Budget: 5000})
	b := res.Bugs[0]
	j := res.Sched.Jobs[b.Job-1]
	if j.Walk.Kind != quicksand.WalkReversal || j.Walk.Slice != 1 || j.Walk.Walk > 10 {
		t.Fatalf("the bug's job %+v: want race reversal's first slice, within 10 walks", j)
	}
	t.Logf("%s at interleaving %d: %s", j.Origin, int64(b.FoundAt), b.PPSet)
	replay()
}
