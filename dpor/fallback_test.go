package dpor

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestFallbackOnTransactions: optimal DPOR with Spec.Fallback (the CLI's
// default) explores again with the dpor strategy at the first _xbegin,
// so it reaches every trace of full enumeration on the three random
// programs with transactions (TestOptimalTransactions's generator,
// programs 748, 1447 and 1765) where optimal DPOR alone misses some, and
// says why in Result.Fallback, with no caveat: the verdict is the dpor
// strategy's. The miss without it is checked too, so that the programs
// still show what they are here for.
func TestFallbackOnTransactions(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(21, 22))
	want := []int{748, 1447, 1765}
	for n := 0; n <= want[len(want)-1]; n++ {
		prog := txnProgram(rnd)
		if !slices.Contains(want, n) {
			continue
		}
		all, _ := traces(t, newModel(prog...), Options{Spec: Spec{Strategy: "full"}})
		alone, r := traces(t, newModel(prog...), Options{Spec: Spec{Strategy: "optimal"}})
		if len(alone) >= len(all) || r.res.Fallback != "" || !strings.HasPrefix(r.res.Caveat, OptimalTMCaveat) {
			t.Errorf("program %d without fallback: %d of %d traces, fallback %q, caveat %q: the program no longer shows the miss", n, len(alone), len(all), r.res.Fallback, r.res.Caveat)
		}
		got, r := traces(t, newModel(prog...), Options{Spec: Spec{Strategy: "optimal", Fallback: true}})
		if !maps.EqualFunc(got, all, func(int, int) bool { return true }) {
			t.Errorf("program %d %v with fallback: %d traces, full enumeration %d", n, prog, len(got), len(all))
		}
		if r.res.Fallback != fallbackTM || r.res.Caveat != "" || !r.res.Complete {
			t.Errorf("program %d with fallback: fallback %q, caveat %q, complete %v", n, r.res.Fallback, r.res.Caveat, r.res.Complete)
		}
	}
}

// TestFallbackOnSleepBlocked: on random lock-free programs with nondet
// calls (TestNondetOptimalTraces's), where optimal DPOR can end
// executions sleep-set blocked, the fallback takes the first such
// execution as the sign to explore with the dpor strategy: every
// program whose optimal exploration blocks one falls back (at least one
// of them here does), its result then has no blocked-execution caveat,
// and every program reaches full enumeration's traces; one that blocks
// none explores exactly what optimal DPOR alone does.
func TestFallbackOnSleepBlocked(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(23, 24))
	fellBack, tested, programs := 0, 0, 60
	for n := 0; n < programs; n++ {
		prog := withNondet(r, lockFreeProgram(r), 3)
		all, full := traces(t, newModel(prog...), Options{Spec: Spec{Strategy: "full", MaxInterleavings: 3000}})
		if !full.res.Complete {
			continue // seconds of enumeration
		}
		tested++
		_, alone := traces(t, newModel(prog...), Options{Spec: Spec{Strategy: "optimal"}})
		got, fb := traces(t, newModel(prog...), Options{Spec: Spec{Strategy: "optimal", Fallback: true}})
		if !maps.EqualFunc(got, all, func(int, int) bool { return true }) {
			t.Errorf("program %d %v: %d traces with fallback, full enumeration %d", n, prog, len(got), len(all))
		}
		switch {
		case alone.sleepBlocked > 0:
			fellBack++
			if fb.res.Fallback != fallbackBlocked || fb.res.Caveat != "" {
				t.Errorf("program %d: %d blocked alone; with fallback: fallback %q, caveat %q", n, alone.sleepBlocked, fb.res.Fallback, fb.res.Caveat)
			}
		case fb.res.Fallback != "" || !slices.Equal(fb.schedules, alone.schedules) || fb.res.Executed != alone.res.Executed:
			t.Errorf("program %d: none blocked, yet with fallback %q: %d executions, alone %d", n, fb.res.Fallback, fb.res.Executed, alone.res.Executed)
		}
	}
	t.Logf("%d of %d programs fell back", fellBack, tested)
	if fellBack == 0 {
		t.Error("no program fell back: the test checks nothing of the fallback")
	}
}

// TestFallbackResume: an exploration stopped before and after its
// fallback resumes from the stored frontier into the same sequence of
// interleavings and the same result as the uninterrupted one (the
// frontier says that it fell back); a frontier that fell back does not
// resume under a spec without Fallback.
func TestFallbackResume(t *testing.T) {
	t.Parallel()
	th := []op{{kind: opInc}, {kind: opTxn, arg: 1}, {kind: opFallback, arg: 1}}
	prog := [][]op{th, th, th}
	opt := Options{Spec: Spec{Strategy: "optimal", Fallback: true}}
	want, wantRes := interrupted(t, prog, opt, nil, false)
	if wantRes.Fallback != fallbackTM || len(want) < 20 {
		t.Fatalf("uninterrupted: fallback %q after %d interleavings", wantRes.Fallback, len(want))
	}
	for _, stops := range [][]int{{1}, {2, 9}, {5, 17, len(want) - 3}} {
		got, res := interrupted(t, prog, opt, stops, len(stops)%2 == 0)
		if !slices.Equal(got, want) || res.Fallback != wantRes.Fallback || res.Executed != wantRes.Executed || res.Interleavings != wantRes.Interleavings {
			t.Errorf("stops %v: %d interleavings (%d executed, fallback %q), uninterrupted %d (%d, %q)", stops, len(got), res.Executed, res.Fallback, len(want), wantRes.Executed, wantRes.Fallback)
		}
	}
}

// TestFallbackFrontierNeedsFallback: a frontier stored after the
// fallback (or with one due) does not resume under a spec that does not
// ask for it: that would continue a dpor exploration as optimal DPOR.
func TestFallbackFrontierNeedsFallback(t *testing.T) {
	th := []op{{kind: opInc}, {kind: opTxn, arg: 1}, {kind: opFallback, arg: 1}}
	for _, stopAt := range []int{1, 5} {
		opt := Options{Spec: Spec{Strategy: "optimal", Fallback: true}}
		opt.OnBranch = func(b *Branch) Stop {
			if b.N == stopAt {
				return StopControl
			}
			return Continue
		}
		x, err := New(newModel(th, th), opt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		f := x.Frontier()
		if f.FellBack == "" && f.FallbackDue == "" {
			t.Fatalf("stopped after %d: the frontier says nothing of the fallback", stopAt)
		}
		if _, err := Resume(newModel(th, th), Options{Spec: Spec{Strategy: "optimal"}}, f); !errors.Is(err, ErrFrontier) {
			t.Errorf("stopped after %d, resumed without Fallback: %v, want ErrFrontier", stopAt, err)
		}
	}
}

// TestFallbackKeepsTheLimit: an interleaving limit that falls on the
// branch that calls for the fallback stops there (the fallback due in
// the frontier), not one branch later; resumed with a higher limit, the
// exploration falls back and goes on as the uninterrupted one does.
func TestFallbackKeepsTheLimit(t *testing.T) {
	th := []op{{kind: opInc}, {kind: opTxn, arg: 1}, {kind: opFallback, arg: 1}}
	spec := Spec{Strategy: "optimal", Fallback: true, KeepGoing: true}
	spec.MaxInterleavings = 1
	x, err := New(newModel(th, th), Options{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := x.Frontier()
	if res.Executed != 1 || res.Stopped != StopLimit || f.FallbackDue != fallbackTM || f.FellBack != "" {
		t.Fatalf("limit 1: %d executed, stopped %v, frontier due %q, fell back %q", res.Executed, res.Stopped, f.FallbackDue, f.FellBack)
	}
	spec.MaxInterleavings = 0
	y, err := Resume(newModel(th, th), Options{Spec: spec}, f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := y.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, whole := traces(t, newModel(th, th), Options{Spec: spec})
	if !got.Complete || got.Fallback != fallbackTM || got.Executed != whole.res.Executed {
		t.Errorf("resumed: complete %v, fallback %q, %d executed; uninterrupted %d", got.Complete, got.Fallback, got.Executed, whole.res.Executed)
	}
}
