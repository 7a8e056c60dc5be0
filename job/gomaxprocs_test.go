package job

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	"landslide/dpor"
	"landslide/fixtures"
	"landslide/kernel"
)

// TestExplorationSameAcrossGOMAXPROCS: which interleavings an exploration
// runs, in which order, and how each ends do not depend on the number of
// processors Go schedules on, nor on map iteration order (Go randomises
// it per map, so two explorations in one process differ in it). Every
// fixture's first interleavings, under the dpor strategy, optimal DPOR,
// and optimal DPOR with its fallback to dpor (explore's default), are
// explored with GOMAXPROCS 1 and then 2, and the sequences of choices
// compared.
func TestExplorationSameAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	n := 0
	for _, f := range fixtures.All() {
		if strings.HasPrefix(f.Name, "bench/") || strings.HasPrefix(f.Name, "isa/") || f.Name == "bugs/loop_forever" {
			// One thread each (a CPU-bound loop of 2·10^8 instructions, the
			// instruction-set tests) or one execution run to the loop
			// heuristic: seconds each, and no order of interleavings.
			continue
		}
		_, img := image(t, f.Name)
		for _, strategy := range []string{"", "optimal", "optimal+fallback"} {
			var sums [2][32]byte
			for i, procs := range []int{1, 2} {
				runtime.GOMAXPROCS(procs)
				sums[i] = explorationSum(t, img, strategy)
			}
			if sums[0] != sums[1] {
				t.Errorf("%s, strategy %q: the interleavings explored under GOMAXPROCS=1 and 2 differ", f.Name, strategy)
			}
			n++
		}
	}
	t.Logf("%d explorations compared", n)
}

// explorationSum explores img's first 20 interleavings and digests the
// choices of each, in order, with how it ended.
func explorationSum(t *testing.T, img []byte, strategy string) [32]byte {
	t.Helper()
	k, err := kernel.New(img, kernel.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	opt := dpor.Options{Spec: dpor.Spec{Strategy: strategy, MaxInterleavings: 20, KeepGoing: true}}
	if strategy == "optimal+fallback" {
		opt.Strategy, opt.Fallback = "optimal", true
	}
	opt.OnBranch = func(b *dpor.Branch) dpor.Stop {
		for _, c := range b.Choices {
			h.Write(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, uint32(c.Thread)), uint64(c.Value)))
		}
		end := "end"
		switch {
		case b.Bug != nil:
			end = b.Bug.Kind.String() + b.Bug.Message
		case b.SleepBlocked:
			end = "asleep"
		}
		h.Write([]byte(end + "\n"))
		return dpor.Continue
	}
	x, err := dpor.New(k, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}
