package minimize

import (
	"context"
	"slices"
	"strings"
	"testing"

	"landslide/dpor"
	"landslide/fixtures"
	"landslide/job"
	"landslide/kernel"
	"landslide/record"
)

// seeded is a seeded-bug fixture's job, as `landslide explore` makes it
// with the fixture's data-race functions (--data-race-func).
func seeded(t *testing.T, f fixtures.Fixture) job.Config {
	t.Helper()
	_, img, err := fixtures.Load(f.Name)
	if err != nil {
		t.Fatal(err)
	}
	pps, err := job.ResolvePPs(img, job.PPRequest{DataRaceFuncs: f.RacePPFuncs})
	if err != nil {
		t.Fatal(err)
	}
	return job.Config{Spec: job.Spec{Program: f.Path(), Kernel: pps.Kernel, TestingMutexes: pps.TestingMutexes}, Image: img}
}

// found explores cfg with spec and returns its bug (nil: none).
func found(t *testing.T, cfg job.Config, spec dpor.Spec) *job.Result {
	t.Helper()
	cfg.Spec.Spec = spec
	res, err := job.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// signature is the bug's signature in cfg's program.
func signature(t *testing.T, cfg job.Config, b *record.Bug) string {
	t.Helper()
	k, err := kernel.New(cfg.Image, cfg.Spec.KernelConfig())
	if err != nil {
		t.Fatal(err)
	}
	_, sig := job.Signature(k.Symbols(), b)
	return sig
}

// TestMinimizeSeededBugs: on every seeded-bug library's fixture, the bug
// the default exploration finds, minimized, has no more preemptions than
// the bound at which iterative context bounding (explore
// --preemption-bound b, b = 0, 1, ...) first finds that bug, is proved
// minimal, replays to the same bug, and has a passing neighbour.
func TestMinimizeSeededBugs(t *testing.T) {
	var fs []fixtures.Fixture
	for _, f := range fixtures.All() {
		if f.Lib != "ref" && f.Lib != "" && f.Expect != "ok" {
			fs = append(fs, f)
		}
	}
	if len(fs) < 9 {
		t.Fatalf("only %d seeded-bug fixtures", len(fs))
	}
	for _, f := range fs {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			cfg := seeded(t, f)
			// The original trace: the fixture's known schedule (paraguay's
			// bug needs 3 preemptions, and depth-first DPOR reaches it only
			// after millions of interleavings), else the default
			// exploration's bug, with the shared stack locations a first
			// exploration learns where the bug needs them (as Quicksand).
			var in Input
			orig := found(t, cfg, dpor.Spec{MaxInterleavings: 1000})
			if orig.Bug == nil && len(orig.SharedStack) > 0 {
				cfg.Spec.Kernel.SharedStack = orig.SharedStack
				orig = found(t, cfg, dpor.Spec{MaxInterleavings: 1000})
			}
			if orig.Bug == nil {
				// Depth-first DPOR reaches paraguay's and paradise_lost's
				// bugs late: random walks find them with more preemptions.
				orig = found(t, cfg, dpor.Spec{Strategy: "random", Seed: 1, MaxInterleavings: 5000})
			}
			if orig.Bug == nil {
				t.Fatalf("neither the default exploration nor random walks found the bug (%d interleavings)", orig.Executed)
			}
			b := orig.BugBranch
			in.Choices, in.Preempted, in.Preemptions = b.Choices, b.Preempted, b.Preemptions
			// minimize's own count of the preemptions agrees with the
			// explorer's.
			k0, err := kernel.New(cfg.Image, cfg.Spec.KernelConfig())
			if err != nil {
				t.Fatal(err)
			}
			if got, err := Preemptions(k0, k0.Snapshot(), b.Choices); err != nil || !slices.Equal(got, b.Preempted) {
				t.Fatalf("Preemptions = %v, %v; the explorer's flags %v", got, err, b.Preempted)
			}
			k, err := kernel.New(cfg.Image, cfg.Spec.KernelConfig())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range in.Choices {
				if _, err := k.Step(c); err != nil {
					t.Fatal(err)
				}
			}
			_, bug := k.Ended()
			if bug == nil {
				t.Fatal("the original trace ends without a bug")
			}
			sig := signature(t, cfg, bug)
			in.Config, in.Signature = cfg, sig
			res, err := Minimize(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			// The reference: the first bound at which ICB finds this bug.
			bound := -1
			for k := 0; k <= in.Preemptions; k++ {
				r := found(t, cfg, dpor.Spec{Strategy: "icb", MaxBound: dpor.Bound(k)})
				if r.Bug != nil && signature(t, cfg, r.Bug) == sig {
					bound = k
					break
				}
			}
			if bound < 0 {
				t.Fatalf("ICB up to %d preemptions never finds %s", in.Preemptions, sig)
			}
			t.Logf("%s: %d preemptions -> %d (ICB finds it at bound %d); %s", sig, in.Preemptions, res.Preemptions, bound, res.Trace.Minimized.Needs)
			if res.Preemptions > bound {
				t.Errorf("minimized to %d preemptions; ICB finds the bug at bound %d", res.Preemptions, bound)
			}
			if !res.Proved {
				t.Errorf("not proved minimal (stopped: %s)", res.Stopped)
			}
			if res.Preemptions > in.Preemptions {
				t.Errorf("%d preemptions, more than the original's %d", res.Preemptions, in.Preemptions)
			}
			n := 0
			for _, p := range res.Preempted {
				if p {
					n++
				}
			}
			if n != res.Preemptions || res.Trace.Preemptions != n {
				t.Errorf("the trace's flags count %d preemptions (report %d), the result says %d", n, res.Trace.Preemptions, res.Preemptions)
			}
			// An independent replay of the minimal choices ends with the bug.
			k, err = kernel.New(cfg.Image, cfg.Spec.KernelConfig())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Choices {
				if _, err := k.Step(c); err != nil {
					t.Fatal(err)
				}
			}
			if _, bug := k.Ended(); bug == nil || signature(t, cfg, bug) != sig {
				t.Fatalf("the minimal choices end with %v, not %s", bug, sig)
			}
			if res.Neighbour == nil {
				// Then no interleaving may pass: the bug is in all of them.
				if passing, all := passingInterleavings(t, cfg); passing > 0 {
					t.Fatalf("no passing neighbour among %d reversals, but %d of %d interleavings pass", res.Tried, passing, all)
				}
				return
			}
			checkNeighbour(t, cfg, res)
		})
	}
}

// checkNeighbour checks a passing neighbour: its schedule, replayed, ends
// without a bug, and it reverses the named pair.
func checkNeighbour(t *testing.T, cfg job.Config, res *Result) {
	t.Helper()
	n := res.Neighbour
	if n == nil {
		t.Errorf("no passing neighbour among %d reversals", res.Tried)
		return
	}
	if !strings.Contains(n.Text, "the bug needs thread") || !strings.Contains(res.Trace.Steps[n.I].Order, "before") {
		t.Errorf("neighbour text %q, order %q", n.Text, res.Trace.Steps[n.I].Order)
	}
	k, err := kernel.New(cfg.Image, cfg.Spec.KernelConfig())
	if err != nil {
		t.Fatal(err)
	}
	var trs []*record.Transition
	for _, c := range n.Choices {
		tr, err := k.Step(c)
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, tr)
	}
	if done, bug := k.Ended(); !done || bug != nil {
		t.Fatalf("the passing neighbour's schedule ends %v with %v", done, bug)
	}
	// Up to I it is the trace; then J's thread runs first.
	for x := 0; x < n.I; x++ {
		if n.Choices[x] != res.Choices[x] {
			t.Fatalf("the neighbour leaves the trace at %d, before the reversal at %d", x, n.I)
		}
	}
	if q := res.Transitions[n.J].Thread; n.Choices[n.I].Thread != q || q == res.Transitions[n.I].Thread {
		t.Fatalf("at #%d the neighbour runs thread %d, want thread %d (not %d)", n.I, n.Choices[n.I].Thread, q, res.Transitions[n.I].Thread)
	}
}

// passingInterleavings explores cfg's whole state space (DPOR, past
// every bug) and counts the interleavings that end without a bug.
func passingInterleavings(t *testing.T, cfg job.Config) (passing, all int) {
	t.Helper()
	k, err := kernel.New(cfg.Image, cfg.Spec.KernelConfig())
	if err != nil {
		t.Fatal(err)
	}
	x, err := dpor.New(k, dpor.Options{Spec: dpor.Spec{KeepGoing: true, MaxInterleavings: 5000},
		OnBranch: func(b *dpor.Branch) dpor.Stop {
			if b.Bug == nil && !b.SleepBlocked && !b.Blocked {
				passing++
			}
			return dpor.Continue
		}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete {
		t.Fatalf("the state space did not complete in %d interleavings", r.Executed)
	}
	return passing, r.Executed
}
