package check

import (
	"context"
	"os"
	"testing"

	"landslide/quicksand"
)

// maximalSize is the size of the maximal state space of fixture name
// (thesis -M: every data-race PP Quicksand finds) in the given mode.
func maximalSize(t *testing.T, name string, mode Spec, args ...string) int {
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
	base := mode
	base.Program, base.Kernel = path, pps.Kernel
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
// the other thread inside the failure path's data race); retry sets
// prune 2 of counter's and 4 of fig63's (to the optimal 6); STM mode
// leaves 4 and 1 (a conflict abort only after the conflicting access).
func TestHTMFigure68(t *testing.T) {
	var retry, stm Spec
	retry.RetrySets = true
	stm.AbortCodes, stm.STM = true, true
	for _, c := range []struct {
		name                 string
		baseline, retry, stm int
	}{
		{"htm/counter", 10, 8, 4},
		{"htm/fig63", 10, 6, 1},
	} {
		for _, m := range []struct {
			name string
			spec Spec
			want int
		}{{"baseline", Spec{}, c.baseline}, {"retry sets", retry, c.retry}, {"STM", stm, c.stm}} {
			if got := maximalSize(t, c.name, m.spec); got != m.want {
				t.Errorf("%s(2,1) %s: %d interleavings, the thesis %d", c.name, m.name, got, m.want)
			}
		}
	}
}

// TestHTM2Verifies: htm2 (thesis Fig. 6.4) verifies at (2,1), (2,2) and
// (3,1) in every mode (maximalSize fails unless the maximal state space
// completes with no bug and covers every race candidate).
func TestHTM2Verifies(t *testing.T) {
	var retry, codes, stm Spec
	retry.RetrySets = true
	codes.AbortCodes = true
	stm.AbortCodes, stm.STM = true, true
	for _, size := range [][]string{{"2", "1"}, {"2", "2"}, {"3", "1"}} {
		for _, mode := range []Spec{{}, retry, codes, stm} {
			if n := maximalSize(t, "htm/htm2", mode, size...); n < 4 {
				t.Errorf("htm2%v: %d interleavings", size, n)
			}
		}
	}
}
