package check

import (
	"context"
	"strings"
	"testing"
	"time"

	"landslide/fixtures"
	"landslide/quicksand"
)

// spinQuicksand is a deterministic Quicksand run of a spin fixture (a
// POSIX program: its seeds are { } alone), as `landslide quicksand`
// runs it with default flags but the clock.
func spinQuicksand(t *testing.T, name string, opt quicksand.Options) *QuicksandResult {
	t.Helper()
	f, image, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	pps, err := ResolvePPs(image, PPRequest{Args: []string{f.Path()}})
	if err != nil {
		t.Fatal(err)
	}
	opt.Deterministic = true
	if opt.Budget == 0 {
		opt.Budget = 20000
	}
	res, err := Quicksand(context.Background(), QuicksandSpec{
		Base:    Spec{Program: f.Path(), Kernel: pps.Kernel, TestingMutexes: pps.TestingMutexes},
		Options: opt,
	}, image, Recording{}, QuicksandHooks{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestQuicksandAtomicConflicts: locks built from C11 atomics have no data
// race, so before atomic conflicts became PPs Quicksand explored only
// { } and declared the broken ones totally verified. Now the correct
// TTAS, ticket and MCS locks are still totally verified, with no
// data-race candidate and every atomic conflict covered, and the broken
// ticket lock (the ticket drawn with a load and a store) and MCS lock
// (the release that does not wait for its successor) have their bugs
// found. The PCT walks are off: the atomic conflicts' jobs find these.
func TestQuicksandAtomicConflicts(t *testing.T) {
	for _, c := range []struct {
		name string
		bug  string // "" for a total verification
	}{
		{"spin/ttas", ""},
		{"spin/ticket", ""},
		{"spin/mcs", ""},
		{"spin/ticket_broken", "assert"},
		{"spin/mcs_broken", "deadlock"},
	} {
		t.Run(strings.TrimPrefix(c.name, "spin/"), func(t *testing.T) {
			res := spinQuicksand(t, c.name, quicksand.Options{WalkShare: -1})
			s := res.Sched
			if len(s.Races) != 0 && c.bug == "" {
				t.Errorf("data-race candidates %+v, want none", s.Races)
			}
			if len(s.Conflicts) == 0 || len(s.AtomicPPs()) == 0 {
				t.Errorf("%d atomic conflicts, %d PPs at them: want some", len(s.Conflicts), len(s.AtomicPPs()))
			}
			if c.bug == "" {
				if res.Verdict.Outcome != Verified || !s.Verified() || len(s.UncoveredConflicts()) != 0 {
					t.Fatalf("%s: %s (%s), want a total verification", c.name, res.Verdict.Outcome, res.Verdict.Message)
				}
				if !strings.Contains(res.Verdict.Message, "every atomic conflict") {
					t.Errorf("verdict %q does not say the atomic conflicts were covered", res.Verdict.Message)
				}
				return
			}
			if res.Verdict.Outcome != Bug || len(res.Bugs) == 0 || !strings.HasPrefix(res.Bugs[0].Message, c.bug) {
				t.Fatalf("%s: %s (%s), want a %s bug", c.name, res.Verdict.Outcome, res.Verdict.Message, c.bug)
			}
			if b := res.Bugs[0]; !strings.Contains(b.PPSet, "atomic conflict at 0x") || b.Trace == nil {
				t.Errorf("the bug's PP set %s has no atomic-conflict PP, or it has no trace", b.PPSet)
			}
			t.Logf("%s: %s after %v interleavings, PPs %s", c.name, res.Bugs[0].Message, int64(res.Bugs[0].FoundAt), res.Bugs[0].PPSet)
		})
	}
	_ = time.Second
}
