package check

import (
	"context"
	"testing"

	"landslide/record"
)

// TestNoFalseLoopOnExitCuts: testdata/exit_cuts.c is correct, but its
// executions differ wildly in depth (main's exit cuts the threads short,
// or the threads run 6,000 data-race PPs first). The thesis's depth
// heuristic (a branch 20× deeper than the completed ones is an infinite
// loop) and its cap of 4,000 PPs per execution both called that a bug
// (SCTBench's micro_2_ok and micro_10_ok under Quicksand's PCT walks);
// by default neither does now, and the exploration ends with no bug. The
// depth heuristic still fires under --thesis-heuristics, which reproduces
// the thesis.
func TestNoFalseLoopOnExitCuts(t *testing.T) {
	elf, image := buildTestdata(t, "exit_cuts", "-O0")
	run := func(thesis bool) *ExploreResult {
		t.Helper()
		pps, err := ResolvePPs(image, PPRequest{Args: []string{elf}, DataRaceFuncs: []string{"worker"}, ThesisHeuristics: thesis})
		if err != nil {
			t.Fatal(err)
		}
		spec := Spec{Program: elf, Kernel: pps.Kernel}
		spec.MaxInterleavings = 30
		res, err := Explore(context.Background(), Config{Spec: spec, Image: image}, Recording{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(false)
	if res.Bug != nil {
		t.Fatalf("default: %v: %s", res.Bug.Kind, res.Bug.Message)
	}
	if res.Executed < 30 {
		t.Fatalf("default: %d executions, want 30", res.Executed)
	}
	if res := run(true); res.Bug == nil || res.Bug.Kind != record.BugLoop {
		t.Fatalf("--thesis-heuristics: bug %v, want the depth heuristic's infinite loop", res.Bug)
	}
}
