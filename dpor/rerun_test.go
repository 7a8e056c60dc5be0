package dpor

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"landslide/fixtures"
	"landslide/kernel"
)

// withoutRerunMemo runs f with optimal DPOR's memo of re-runs off.
func withoutRerunMemo(f func()) {
	rerunCache = false
	defer func() { rerunCache = true }()
	f()
}

// TestRerunMemoChangesNothing: optimal DPOR's memo of re-run sequences
// (optNode.reruns) is only a cache: with and without it, the same
// interleavings are explored in the same order with the same result, on
// random programs of every kind the optimal tests use (state-dependent
// accesses, nondet values, transactions) and on reference programs
// (the first 2,000 interleavings of paraguay and of realloc_race, a
// program whose reversals re-run their sequences often), and the memo
// answers some re-runs there.
func TestRerunMemoChangesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var progs [][][]op
	for n := 0; n < 40; n++ {
		switch n % 3 {
		case 0:
			progs = append(progs, randomProgram(r))
		case 1:
			progs = append(progs, withNondet(r, lockFreeProgram(r), 2))
		default:
			progs = append(progs, txnProgram(r))
		}
	}
	for n, prog := range progs {
		opt := Options{Spec: Spec{Strategy: "optimal", MaxInterleavings: 3000}}
		want := explore(t, newModel(prog...), opt)
		var got run
		withoutRerunMemo(func() { got = explore(t, newModel(prog...), opt) })
		if !slices.Equal(got.schedules, want.schedules) || got.res.Executed != want.res.Executed || got.sleepBlocked != want.sleepBlocked {
			t.Fatalf("program %d %v: %d interleavings without the memo, %d with", n, prog, len(got.schedules), len(want.schedules))
		}
	}
	hits := 0
	for _, c := range []struct {
		name string
		max  int
	}{{"ref/paraguay", 2000}, {"ref/realloc_race", 2000}} {
		f, img, err := fixtures.Load(c.name)
		if err != nil {
			t.Fatal(err)
		}
		sum := func() ([32]byte, *Result) {
			k, err := kernel.New(img, kernel.Config{Args: []string{f.Path()}, SyncPPs: []string{"mutex_lock", "mutex_unlock"}})
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			x, err := New(k, Options{Spec: Spec{Strategy: "optimal", MaxInterleavings: c.max, KeepGoing: true}, OnBranch: func(b *Branch) Stop {
				fmt.Fprintln(h, b.Choices, b.SleepBlocked, b.Bug != nil)
				return Continue
			}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := x.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if os, ok := x.strat.(*optimalStrategy); ok {
				hits += os.memoHits
			}
			return [32]byte(h.Sum(nil)), res
		}
		want, wres := sum()
		var got [32]byte
		var gres *Result
		withoutRerunMemo(func() { got, gres = sum() })
		if got != want || gres.Executed != wres.Executed || gres.Traces != wres.Traces {
			t.Errorf("%s: without the memo %d executions, %d traces; with it %d, %d, or another order", c.name, gres.Executed, gres.Traces, wres.Executed, wres.Traces)
		}
		t.Logf("%s: %d executions, %d traces", c.name, wres.Executed, wres.Traces)
	}
	if hits == 0 {
		t.Error("the memo answered no re-run: the test compares nothing")
	}
	t.Logf("%d re-runs answered by the memo", hits)
}
