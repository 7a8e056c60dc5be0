package check

import (
	"context"
	"os"
	"slices"
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
// Quicksand finds, under the thesis's own DPOR (Landslide's sleep-set
// check, dpor.Spec.LandslideSleepSets): counter and fig63 explore 10
// interleavings in the baseline (the 8 success/abort permutations of two
// threads, and 2 with the other thread inside the failure path's data
// race); retry sets prune 2 of counter's and 4 of fig63's (to the optimal
// 6); STM mode leaves 4 and 1 (a conflict abort only after the
// conflicting access). The default DPOR's sleep sets prune more in the
// baseline (8 for both, logged), never less.
func TestHTMFigure68(t *testing.T) {
	var thesis, retry, stm Spec
	thesis.LandslideSleepSets = true
	retry.RetrySets, retry.LandslideSleepSets = true, true
	stm.AbortCodes, stm.STM, stm.LandslideSleepSets = true, true, true
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
		}{{"baseline", thesis, c.baseline}, {"retry sets", retry, c.retry}, {"STM", stm, c.stm}} {
			if got := maximalSize(t, c.name, m.spec); got != m.want {
				t.Errorf("%s(2,1) %s: %d interleavings, the thesis %d", c.name, m.name, got, m.want)
			}
			def := m.spec
			def.LandslideSleepSets = false
			got := maximalSize(t, c.name, def)
			if got > m.want {
				t.Errorf("%s(2,1) %s: %d interleavings with sleep sets, more than the thesis's %d", c.name, m.name, got, m.want)
			}
			t.Logf("%s(2,1) %s: %d interleavings with sleep sets, the thesis %d", c.name, m.name, got, m.want)
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

// TestWeakBothHalves: under weak atomicity (-A -S -W) a transaction's body
// has PPs, so a race between a transactional and a plain access gets a PP
// at both accesses, even when it was seen in one order only (thesis
// §6.2.4). weak_flag's transaction writes x, which the other thread
// reads with a plain load, always after it (it waits for a flag the
// writer raises afterwards). Without -W such a race gets a PP at its
// first access only.
func TestWeakBothHalves(t *testing.T) {
	path := "../fixtures/bin/htm/weak_flag.elf"
	image, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pps, err := ResolvePPs(image, PPRequest{Args: []string{path, "2", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	// halves are the single-order races the -W run preempts at both
	// accesses.
	var halves [][2]uint64
	for _, weak := range []bool{true, false} {
		var base Spec
		base.Program, base.Kernel = path, pps.Kernel
		base.AbortCodes, base.STM, base.WeakAtomicity = true, true, weak
		res, err := Quicksand(context.Background(), QuicksandSpec{Base: base,
			Options: quicksand.Options{Budget: 100000, Deterministic: true}}, image, Recording{}, QuicksandHooks{})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Sched
		isPP := func(pc uint64) bool {
			for _, pp := range s.Reg.PPs {
				if pp.IsRace() && pp.PC == pc {
					return true
				}
			}
			return false
		}
		for _, n := range s.Races {
			if n.BothHalves && !weak {
				t.Errorf("without -W, race %#x/%#x is marked both halves", n.PCA, n.PCB)
			}
			if !n.BothHalves || n.BothOrder {
				continue
			}
			halves = append(halves, [2]uint64{n.PCA, n.PCB})
			if !isPP(n.PCA) || !isPP(n.PCB) {
				t.Errorf("-W: race %#x/%#x, seen in one order: PPs at %v/%v, want both", n.PCA, n.PCB, isPP(n.PCA), isPP(n.PCB))
			}
		}
		if weak && len(halves) == 0 {
			t.Fatalf("-W: no single-order race between a transaction and plain code: %+v", s.Races)
		}
		if !weak {
			for _, n := range s.Races {
				if !n.BothOrder && slices.Contains(halves, [2]uint64{n.PCA, n.PCB}) && isPP(n.PCB) {
					t.Errorf("without -W, race %#x/%#x, seen in one order, has a PP at its second access", n.PCA, n.PCB)
				}
			}
		}
	}
}
