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

// TestExpiredCutsABranch: Options.Expired is asked every ExpiredEvery
// steps of a branch, and once it says so the branch ends there, as one
// that ran out of budget (Branch.Budget, Result.Budgeted: not complete,
// no verdict), which OnBranch sees: one execution of many steps keeps
// the caller's time budget.
func TestExpiredCutsABranch(t *testing.T) {
	long := make([]op, 3*ExpiredEvery)
	for i := range long {
		long[i] = op{kind: opSet, v: 0, arg: int64(i)}
	}
	calls := 0
	var seen []*Branch
	x, err := New(newModel(long, []op{{kind: opSet, v: 1, arg: 1}}), Options{
		Expired:  func() bool { calls++; return calls >= 2 },
		OnBranch: func(b *Branch) Stop { seen = append(seen, b); return StopBudget },
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(seen) != 1 || !seen[0].Budget || res.Stopped != StopBudget || res.Budgeted != 1 || res.Complete {
		t.Fatalf("Expired asked %d times, %d branches (budget %v); stopped %q, %d budgeted, complete %v",
			calls, len(seen), len(seen) > 0 && seen[0].Budget, res.Stopped, res.Budgeted, res.Complete)
	}
	if n := res.Transitions; n != 2*ExpiredEvery {
		t.Errorf("the branch ran %d steps, want %d (cut at the second question)", n, 2*ExpiredEvery)
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
