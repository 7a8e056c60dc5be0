package dpor

import (
	"context"
	"testing"

	"landslide/record"
)

// limitModel is a model whose failures are checker limits (as the
// kernel reports going past its thread limit): an assertion that fails
// stands for an execution that went past a limit.
type limitModel struct{ *model }

func (m limitModel) Ended() (bool, *record.Bug) {
	ended, bug := m.model.Ended()
	if bug != nil {
		bug = &record.Bug{Kind: record.BugLimit, Message: "thread limit: " + bug.Message, Thread: bug.Thread}
	}
	return ended, bug
}

// TestCheckerLimitStops: an execution that ends at a checker limit is no
// bug. The exploration stops there (StopCheckerLimit, with KeepGoing
// too), incomplete, with the limit and the choices that replay it; the
// same program whose failure is a bug stops with StopBug instead.
func TestCheckerLimitStops(t *testing.T) {
	// Thread 2 fails unless thread 1 has set v0 first; with thread 1's
	// first operation unrelated, the default schedule (thread 1 to its
	// end first) passes and a later interleaving fails.
	prog := func() [][]op {
		return [][]op{
			{{kind: opSet, v: 1, arg: 1}, {kind: opSet, v: 0, arg: 1}},
			{{kind: opAssert, v: 0, arg: 1}},
		}
	}
	for _, keep := range []bool{false, true} {
		m := limitModel{newModel(prog()...)}
		x, err := New(m, Options{Spec: Spec{KeepGoing: keep}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := x.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Stopped != StopCheckerLimit || res.Bug != nil || res.BugBranch != nil || res.Complete || res.Bounded {
			t.Fatalf("keep going %v: stopped %q, bug %v, complete %v, bounded %v; want a checker limit and no bug",
				keep, res.Stopped, res.Bug, res.Complete, res.Bounded)
		}
		if !res.Limit.IsLimit() || res.Limit.Message != "thread limit: thread 2 op 0: v0 == 1 failed" {
			t.Fatalf("limit %v", res.Limit)
		}
		if res.Executed < 2 {
			t.Errorf("%d executions: the default one passes, a later one fails", res.Executed)
		}
		// The choices replay the execution to its limit.
		r := newModel(prog()...)
		for _, c := range res.LimitChoices {
			if _, err := r.Step(c); err != nil {
				t.Fatal(err)
			}
		}
		if ended, bug := r.Ended(); !ended || bug == nil {
			t.Errorf("replaying %v: ended %v, %v", res.LimitChoices, ended, bug)
		}
	}
	x, err := New(newModel(prog()...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != StopBug || res.Bug == nil || res.Limit != nil {
		t.Fatalf("as a bug: stopped %q, bug %v, limit %v", res.Stopped, res.Bug, res.Limit)
	}
	if ParseStop(StopCheckerLimit.String()) != StopCheckerLimit || StopCheckerLimit.String() != "checker limit" {
		t.Errorf("StopCheckerLimit reads back as %q", ParseStop(StopCheckerLimit.String()))
	}
}

// TestExpiredCutAbandons: Options.Expired is asked every ExpiredEvery
// steps of a branch, and the branch it cuts is not one at all: Run
// returns at once with Result.Cut, the counts of the branches before it
// (here one complete branch, then the second cut at its first question),
// no OnBranch for it, and no Frontier; a second Run refuses.
func TestExpiredCutAbandons(t *testing.T) {
	long := make([]op, 3*ExpiredEvery)
	for i := range long {
		long[i] = op{kind: opSet, v: 0, arg: int64(i)}
	}
	calls, branches := 0, 0
	// Thread 1's one write races with thread 2's: a second branch.
	x, err := New(newModel([]op{{kind: opSet, v: 0, arg: -1}}, long), Options{
		// The first branch runs 1+3*ExpiredEvery steps (asked three
		// times: no); the second is cut at its first question.
		Expired:  func() bool { calls++; return calls >= 4 },
		OnBranch: func(b *Branch) Stop { branches++; return Continue },
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cut || res.Stopped != StopBudget || res.Complete || branches != 1 || res.Executed != 1 || res.Budgeted != 0 {
		t.Fatalf("cut %v, stopped %q, complete %v, %d branches seen, %d executed, %d budgeted; want a cut after one branch",
			res.Cut, res.Stopped, res.Complete, branches, res.Executed, res.Budgeted)
	}
	if res.Transitions != 1+3*ExpiredEvery {
		t.Errorf("%d transitions counted, want the first branch's %d", res.Transitions, 1+3*ExpiredEvery)
	}
	if calls != 4 {
		t.Errorf("Expired asked %d times, want 4", calls)
	}
	if x.Frontier() != nil {
		t.Error("a cut explorer gave a frontier")
	}
	if _, err := x.Run(context.Background()); err == nil {
		t.Error("a cut explorer ran again")
	}
}

// TestPastLimits: with Options.PastLimits an execution that goes past a
// checker limit ends there and the exploration goes on to the end of the
// tree (here three executions reach the limit), keeping the first limit
// and counting each such execution as out of budget (no verdict); without
// it the exploration stops at the first.
func TestPastLimits(t *testing.T) {
	prog := func() [][]op {
		return [][]op{
			{{kind: opSet, v: 1, arg: 1}, {kind: opSet, v: 0, arg: 1}},
			{{kind: opAssert, v: 0, arg: 1}},
			{{kind: opSet, v: 1, arg: 2}},
		}
	}
	for _, past := range []bool{false, true} {
		x, err := New(limitModel{newModel(prog()...)}, Options{PastLimits: past})
		if err != nil {
			t.Fatal(err)
		}
		res, err := x.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !past && (res.Stopped != StopCheckerLimit || res.Budgeted != 0):
			t.Errorf("without PastLimits: stopped %q, %d budgeted", res.Stopped, res.Budgeted)
		case past && (res.Stopped != Continue || !res.Complete || res.Bug != nil || !res.Limit.IsLimit() || res.Budgeted != 3 || res.Executed <= res.Budgeted):
			t.Errorf("past limits: stopped %q, complete %v, bug %v, limit %v, %d budgeted of %d executions",
				res.Stopped, res.Complete, res.Bug, res.Limit, res.Budgeted, res.Executed)
		}
	}
}
