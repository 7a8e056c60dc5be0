package dpor

import (
	"context"
	"math"
	"testing"
	"time"
)

// xplusplus is the thesis's Figure 2.1/2.4 program: two threads each run
// tmp = x; tmp++; x = tmp, with a PP before every event.
func xplusplus() *model {
	t := []op{{kind: opLoad}, {kind: opInc}, {kind: opStore}}
	return newModel(t, t)
}

type run struct {
	res       *Result
	schedules []string
	outcomes  map[string]bool
	// sleepBlocked counts the branches abandoned with every runnable
	// thread asleep (not in schedules or outcomes).
	sleepBlocked int
}

func explore(t *testing.T, m *model, opt Options) run {
	t.Helper()
	r := run{outcomes: map[string]bool{}}
	user := opt.OnBranch
	opt.KeepGoing = true
	opt.OnBranch = func(b *Branch) Stop {
		if b.SleepBlocked {
			r.sleepBlocked++
			return Continue // not an end state of the program
		}
		if b.SelfAbort {
			return Continue // nor this
		}
		r.schedules = append(r.schedules, schedString(b.Choices))
		r.outcomes[m.outcome()] = true
		if user != nil {
			return user(b)
		}
		return Continue
	}
	x, err := New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.res = res
	return r
}

// TestXPlusPlusCounts: thesis Fig. 2.4, C(6,3) = 20 interleavings without
// reduction; Fig. 3.6, 6 with DPOR (C(4,2): only the 4 accesses to x
// matter); §3.4.2 "Sleep set reduction": 4 (A, B, C, K) with sleep sets.
func TestXPlusPlusCounts(t *testing.T) {
	full := explore(t, xplusplus(), Options{Spec: Spec{Strategy: "full"}})
	if full.res.Interleavings != 20 || !full.res.Complete {
		t.Errorf("no reduction: %d interleavings (complete %v), want 20", full.res.Interleavings, full.res.Complete)
	}
	plain := explore(t, xplusplus(), Options{Spec: Spec{NoSleepSets: true, AllPairs: true}})
	if plain.res.Interleavings != 6 || !plain.res.Complete {
		t.Errorf("DPOR: %d interleavings, want 6: %v", plain.res.Interleavings, plain.schedules)
	}
	// The thesis's branches A, B, C, K, L, M in its order (Fig. 3.5, 3.6).
	want := []string{"1,1,1,2,2,2", "1,1,2,2,2,1", "1,1,2,2,1,2", "2,2,2,1,1,1", "2,2,1,1,1,2", "2,2,1,1,2,1"}
	if len(plain.schedules) == 6 {
		for i := range want {
			if plain.schedules[i] != want[i] {
				t.Errorf("DPOR branch %d is %s, thesis %s", i, plain.schedules[i], want[i])
			}
		}
	}
	sleep := explore(t, xplusplus(), Options{Spec: Spec{AllPairs: true}})
	if sleep.res.Interleavings != 4 {
		t.Errorf("DPOR with sleep sets: %d interleavings %v, want 4 (A, B, C, K)", sleep.res.Interleavings, sleep.schedules)
	}
	// The default reverses only direct races: no more than the thesis's
	// DPOR, no fewer than the 4 Mazurkiewicz traces.
	direct := explore(t, xplusplus(), Options{Spec: Spec{NoSleepSets: true}})
	directSleep := explore(t, xplusplus(), Options{})
	if n := direct.res.Interleavings; n > 6 || n < 4 || directSleep.res.Interleavings != 4 {
		t.Errorf("direct races: %d interleavings, %d with sleep sets; want 4..6 and 4", n, directSleep.res.Interleavings)
	}
	// x ends as 1 or 2; every variant reaches both.
	for name, r := range map[string]run{"full": full, "dpor": plain, "sleep": sleep, "direct": direct, "direct+sleep": directSleep} {
		if len(r.outcomes) != 2 {
			t.Errorf("%s: outcomes %v, want x==1 and x==2", name, r.outcomes)
		}
	}
}

// TestXPlusPlusEstimates: the thesis's worked example of the estimators
// (§3.4.3) as DPOR produces it, 1 s per transition.
func TestXPlusPlusEstimates(t *testing.T) {
	m := xplusplus()
	var clock int64
	m.clock, m.tick = &clock, int64(time.Second)
	wantSize := []float64{4, 16.0 / 3, 6, 16.0 / 3, 40.0 / 7, 6}
	wantTime := []float64{20, 24, 24, 22, 24, 24}
	i := 0
	explore(t, m, Options{Spec: Spec{NoSleepSets: true, AllPairs: true}, Now: func() time.Duration { return time.Duration(clock) },
		OnBranch: func(b *Branch) Stop {
			if i < len(wantSize) {
				if math.Abs(b.Estimate.Size-wantSize[i]) > 1e-9 || b.Estimate.Total.Seconds() != wantTime[i] {
					t.Errorf("branch %d: size %.3f time %v; thesis %.2f, %.0fs", i+1, b.Estimate.Size, b.Estimate.Total, wantSize[i], wantTime[i])
				}
			}
			i++
			return Continue
		}})
}
