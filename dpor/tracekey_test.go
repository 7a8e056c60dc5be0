package dpor

import (
	"context"
	"testing"

	"landslide/fixtures"
	"landslide/kernel"
)

// TestClassUnderAbortInjection: on the TM fixtures, whose transitions
// carry injected abort statuses, the explorer's trace key (Branch.Class)
// tells the interleavings apart exactly as traceOf, computed from the
// accesses and choice values alone, does: the same number of distinct
// traces under dpor and optimal DPOR. (So where strategies report
// different trace counts on these programs, they reached different
// traces; BENCHMARKS.md, "Transactional memory: state-space sizes".)
func TestClassUnderAbortInjection(t *testing.T) {
	for _, name := range []string{"htm/counter", "htm/fig63", "htm/htm2"} {
		f, img, err := fixtures.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		pcs, err := kernel.SharedMemoryPCs(img, []string{"iteration"})
		if err != nil {
			t.Fatal(err)
		}
		for _, strategy := range []string{"dpor", "optimal"} {
			k, err := kernel.New(img, kernel.Config{Args: []string{f.Path(), "3", "1"}, DataRacePCs: pcs})
			if err != nil {
				t.Fatal(err)
			}
			classes, keys := map[[16]byte]bool{}, map[string]bool{}
			x, err := New(k, Options{Spec: Spec{Strategy: strategy, KeepGoing: true}, OnBranch: func(b *Branch) Stop {
				if !b.SleepBlocked {
					classes[b.Class()] = true
					keys[traceOf(b.Transitions, b.Choices)] = true
				}
				return Continue
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := x.Run(context.Background()); err != nil || !res.Complete {
				t.Fatalf("%s (3,1) under %s: %v", name, strategy, err)
			}
			if len(classes) != len(keys) || len(keys) < 20 {
				t.Errorf("%s (3,1) under %s: %d classes, %d traces by traceOf", name, strategy, len(classes), len(keys))
			}
			t.Logf("%s (3,1) under %s: %d traces", name, strategy, len(keys))
		}
	}
}
