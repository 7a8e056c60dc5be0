package dpor

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"landslide/record"

	"github.com/vmihailenco/msgpack/v5"
)

// interrupted explores prog, stopping after each interleaving whose
// number is in stops, and continues each time from the frontier in a
// fresh machine (as `landslide resume` does in a new process). It returns
// the schedules in order and the last result.
func interrupted(t *testing.T, prog [][]op, opt Options, stops []int, withCheckpoints bool) ([]string, *Result) {
	t.Helper()
	var schedules []string
	var fr *Frontier
	stopAt := map[int]bool{}
	for _, s := range stops {
		stopAt[s] = true
	}
	opt.KeepGoing = true
	for round := 0; ; round++ {
		m := newModel(prog...)
		o := opt
		o.OnBranch = func(b *Branch) Stop {
			schedules = append(schedules, schedString(b.Choices))
			if stopAt[b.N] {
				delete(stopAt, b.N)
				return StopControl
			}
			return Continue
		}
		var x *Explorer
		if fr == nil {
			var err error
			if x, err = New(m, o); err != nil {
				t.Fatal(err)
			}
		} else {
			if withCheckpoints {
				// A "stored" state after every second choice: the
				// prefix replayed on another fresh model.
				o.Checkpoint = func(prefix []record.Choice) (int, record.Snapshot) {
					d := len(prefix) &^ 1
					c := newModel(prog...)
					for _, ch := range prefix[:d] {
						if _, err := c.Step(ch); err != nil {
							t.Fatalf("checkpoint replay: %v", err)
						}
					}
					return d, c.Snapshot()
				}
			}
			var err error
			if x, err = Resume(m, o, fr); err != nil {
				t.Fatal(err)
			}
		}
		res, err := x.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Stopped != StopControl {
			return schedules, res
		}
		// Through its stored form, as the store keeps it.
		b, err := msgpack.Marshal(x.Frontier())
		if err != nil {
			t.Fatal(err)
		}
		fr = new(Frontier)
		if err := msgpack.Unmarshal(b, fr); err != nil {
			t.Fatal(err)
		}
		if round > len(stops) {
			t.Fatal("more rounds than stops")
		}
	}
}

// TestResumeEqualsUninterrupted: stopping after random interleavings and
// resuming from the frontier in a fresh machine explores exactly the
// interleavings of an uninterrupted run, in the same order, with the same
// result: plain DPOR, without sleep sets, ICB to the maximal bound, and
// full enumeration, optimal DPOR (its sleep sets and wakeup trees
// through the frontier), CB-DPOR to the maximal bound (its sleep sets); with and without checkpoints; through the
// frontier's stored (msgpack) form.
func TestResumeEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	modes := []Options{{}, {Spec: Spec{NoSleepSets: true}}, {Spec: Spec{Strategy: "icb"}}, {Spec: Spec{Strategy: "full"}}, {Spec: Spec{Strategy: "optimal"}},
		{Spec: Spec{Strategy: "cbdpor"}}}
	resumed := 0
	for n := 0; n < 75; n++ {
		prog := randomProgram(r)
		if n%3 == 0 {
			if prog = withNondet(r, prog, 2); size(prog) > 11 {
				continue
			}
		}
		opt := modes[n%len(modes)]
		want, wantRes := interrupted(t, prog, opt, nil, false)
		if len(want) < 3 {
			continue
		}
		stops := randomStops(r, len(want))
		got, gotRes := interrupted(t, prog, opt, stops, n%2 == 0)
		resumed += len(stops)
		if !slices.Equal(got, want) {
			t.Fatalf("program %d (%+v), stops %v:\nresumed   %v\nuninterrupted %v", n, opt, stops, got, want)
		}
		if gotRes.Interleavings != wantRes.Interleavings || gotRes.Executed != wantRes.Executed ||
			gotRes.Transitions != wantRes.Transitions || gotRes.Complete != wantRes.Complete || gotRes.SleepBlocked != wantRes.SleepBlocked ||
			gotRes.Estimate.Size != wantRes.Estimate.Size || gotRes.Estimate.Proportion != wantRes.Estimate.Proportion {
			t.Fatalf("program %d: resumed result %+v, uninterrupted %+v", n, gotRes, wantRes)
		}
		// A resumed run counts only its own interleavings' traces.
		if wantRes.TracesAtLeast || wantRes.Traces == 0 || (len(stops) > 0) != gotRes.TracesAtLeast || gotRes.Traces > wantRes.Traces {
			t.Fatalf("program %d, stops %v: traces %d (at least %v), uninterrupted %d (at least %v)", n, stops, gotRes.Traces, gotRes.TracesAtLeast, wantRes.Traces, wantRes.TracesAtLeast)
		}
	}
	if resumed < 100 {
		t.Fatalf("only %d resumptions exercised", resumed)
	}
}

// TestResumeRejectsOtherProgram: a frontier resumed on a different
// program fails with ErrFrontier when re-execution diverges, instead of
// exploring something else.
func TestResumeRejectsOtherProgram(t *testing.T) {
	a := [][]op{{{kind: opLoad}, {kind: opInc}, {kind: opStore}}, {{kind: opLoad}, {kind: opInc}, {kind: opStore}}}
	b := [][]op{{{kind: opLoad}, {kind: opInc}, {kind: opStore}}, {{kind: opLoad, v: 1}, {kind: opInc}, {kind: opStore, v: 1}}}
	var fr *Frontier
	var x *Explorer
	x, err := New(newModel(a...), Options{OnBranch: func(b *Branch) Stop {
		fr = x.Frontier()
		if b.N < 2 {
			return Continue
		}
		return StopControl
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	y, err := Resume(newModel(b...), Options{}, fr)
	if err != nil {
		t.Fatal(err) // same shape: only re-execution can tell
	}
	if _, err := y.Run(context.Background()); !errors.Is(err, ErrFrontier) {
		t.Fatalf("resuming on another program: %v, want ErrFrontier", err)
	}
	bad := *fr
	bad.Version = 99
	if _, err := Resume(newModel(a...), Options{}, &bad); !errors.Is(err, ErrFrontier) {
		t.Fatalf("version 99: %v", err)
	}
	bad = *fr
	bad.Nodes = append([]FrontierNode(nil), fr.Nodes...)
	bad.Nodes[0].Tagged = []record.TID{9}
	if _, err := Resume(newModel(a...), Options{}, &bad); !errors.Is(err, ErrFrontier) {
		t.Fatalf("tag of a thread that cannot run: %v", err)
	}
}

// TestResumeRetrySets: the same with retry sets, on random programs with
// transactions (their tags' sets, pending and explored, the narrowed
// children and the sleep sets' narrowed entries go through the
// frontier), with sleep sets and with the thesis's check.
func TestResumeRetrySets(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	modes := []Options{{Spec: Spec{RetrySets: true}}, {Spec: Spec{RetrySets: true, LandslideSleepSets: true}}}
	resumed := 0
	for n := 0; n < 40; n++ {
		prog := txnProgram(r)
		opt := modes[n%len(modes)]
		want, wantRes := interrupted(t, prog, opt, nil, false)
		stops := randomStops(r, len(want))
		got, gotRes := interrupted(t, prog, opt, stops, n%2 == 0)
		resumed += len(stops)
		if !slices.Equal(got, want) || gotRes.Executed != wantRes.Executed || gotRes.Complete != wantRes.Complete {
			t.Fatalf("program %d %v (%+v), stops %v:\nresumed   %v\nuninterrupted %v", n, prog, opt.Spec, stops, got, want)
		}
	}
	if resumed < 100 {
		t.Fatalf("only %d resumptions exercised", resumed)
	}
}

// TestOldRetryTags: an older frontier's retry tags (the union of a
// thread's sets at a node, or free) become one set each, explored and,
// for a thread still tagged, pending, under the node's constraints.
func TestOldRetryTags(t *testing.T) {
	n := node{tagged: []record.TID{2}, consIn: retryCons{1: {res: []uint8{resAbort}}}}
	oldTags(&n, []FrontierRetry{{Thread: 2, Cons: []RetryResult{{Thread: 2, Bits: resSuccess}, {Thread: 3, Bits: resWait}}}, {Thread: 3, Free: true}})
	tag2 := retryCons{1: {res: []uint8{resAbort}}, 2: {res: []uint8{resSuccess}}, 3: {wait: true}}
	if len(n.rever[2]) != 1 || !equalCons(n.rever[2][0], tag2) || len(n.rtodo[2]) != 1 || !equalCons(n.rtodo[2][0], tag2) {
		t.Errorf("thread 2: explored %v, pending %v; want %v in both", n.rever[2], n.rtodo[2], tag2)
	}
	if len(n.rever[3]) != 1 || !equalCons(n.rever[3][0], n.consIn) || len(n.rtodo[3]) != 0 {
		t.Errorf("thread 3 (free, not tagged): explored %v, pending %v; want the node's constraints, nothing pending", n.rever[3], n.rtodo[3])
	}
}

// randomStops picks about a third of the interleavings 1 to n-1 to stop
// after.
func randomStops(r *rand.Rand, n int) []int {
	var stops []int
	for i := 1; i < n; i++ {
		if r.IntN(3) == 0 {
			stops = append(stops, i)
		}
	}
	return stops
}
