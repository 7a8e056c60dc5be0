package check

import (
	"context"
	"os"
	"testing"

	"landslide/quicksand"
)

// maximalSize is the size of the maximal state space of fixture name
// (thesis -M: every data-race PP Quicksand finds) in the given mode.
func maximalSize(t *testing.T, name string, abortCodes, stm bool, args ...string) int {
	t.Helper()
	path := "../fixtures/bin/" + name + ".elf"
	image, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pps, err := ResolvePPs(image, PPRequest{Args: append([]string{path}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	base := Spec{Program: path, Kernel: pps.Kernel}
	base.AbortCodes, base.STM = abortCodes, stm
	res, err := Quicksand(context.Background(), QuicksandSpec{Base: base,
		Options: quicksand.Options{Budget: 100000, Deterministic: true, Maximal: true}}, image, Recording{}, QuicksandHooks{})
	if err != nil {
		t.Fatal(err)
	}
	last := res.Sched.Jobs[len(res.Sched.Jobs)-1]
	if res.Verdict.Outcome != Verified || last.Status != quicksand.Complete {
		t.Fatalf("%s %v: %s, last job %v", name, args, res.Verdict.Message, last.Status)
	}
	return last.Interleavings
}

// TestHTMFigure68: the exact state-space sizes of the thesis's Fig. 6.8
// (Table 6.2's (2,1) rows), maximal state space with the data-race PPs
// Quicksand finds: counter and fig63 explore 10 interleavings in the
// baseline (the 8 success/abort permutations of two threads, and 2 with
// the other thread inside the failure path's data race), and 4 and 1 in
// STM mode (a conflict abort only after the conflicting access).
func TestHTMFigure68(t *testing.T) {
	for _, c := range []struct {
		name          string
		baseline, stm int
	}{
		{"htm/counter", 10, 4},
		{"htm/fig63", 10, 1},
	} {
		if got := maximalSize(t, c.name, false, false); got != c.baseline {
			t.Errorf("%s(2,1) baseline: %d interleavings, the thesis %d", c.name, got, c.baseline)
		}
		if got := maximalSize(t, c.name, true, true); got != c.stm {
			t.Errorf("%s(2,1) STM: %d interleavings, the thesis %d", c.name, got, c.stm)
		}
	}
}
