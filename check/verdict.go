package check

import (
	"fmt"
	"strings"

	"landslide/dpor"
	"landslide/job"
	"landslide/quicksand"
	"landslide/store"
)

// Outcome is what a check established, the basis of its exit code.
type Outcome uint8

// Outcomes.
const (
	// Verified: the state space (for Quicksand: the maximal one, covering
	// every race candidate) completed with no bug.
	Verified Outcome = iota
	// Bug: a bug was found.
	Bug
	// NoBug: every state space explored completed without a bug, but
	// that is not a verification of the program (Quicksand's uncovered
	// race candidates).
	NoBug
	// Bounded: no bug within a preemption bound, but some interleavings
	// need more preemptions.
	Bounded
	// Budget: the time or interleaving budget ran out first.
	Budget
	// Interrupted: the context was canceled; the run is resumable.
	Interrupted
	// Limit: an execution went past a limit of the checker (threads,
	// memory, output; record.Bug.IsLimit) and no bug was found: no
	// verdict on the program (exit 3, like a budget). A limit is never a
	// bug, and never verified.
	Limit
)

var outcomeNames = [...]string{Verified: "verified", Bug: "bug", NoBug: "no bug", Bounded: "bounded", Budget: "budget", Interrupted: "interrupted", Limit: "limit"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", o)
}

// Verdict is how a check ended: its outcome, the stored run's status and
// a sentence saying it.
type Verdict struct {
	Outcome Outcome
	Status  store.Status
	Message string
}

// exploreVerdict is the verdict of one job (its stored status).
func exploreVerdict(r *job.Result) Verdict {
	status, msg := r.Status()
	v := Verdict{Budget, status, msg}
	switch {
	case r.Bug != nil:
		v.Outcome = Bug
	case r.Stopped == dpor.StopCheckerLimit:
		v.Outcome = Limit
	case r.Verified:
		v.Outcome = Verified
	case r.Bounded:
		v.Outcome = Bounded
	case r.Stopped == dpor.StopCanceled:
		v.Outcome = Interrupted
	}
	return v
}

// quicksandVerdict derives a Quicksand run's verdict from its job table
// alone; bugs is the number of distinct bugs (deduplicated by signature).
// No other code decides a Quicksand run's verdict.
//
//   - A bug: Bug.
//   - A job went past a checker limit (quicksand.LimitReached): Limit,
//     never a verification, whatever the other jobs did.
//   - Total verification (Sched.Verified): Verified.
//   - Every job ended without a bug and none ran out of budget, but
//     data-race candidates or atomic conflicts stayed uncovered (--control, where races add no
//     PPs; or race PPs a without filter excludes): NoBug, stored as
//     bounded: no bug in the PP sets explored, not a total verification.
//   - Interrupted before the end: Interrupted.
//   - A job ran out of budget (timed out): Budget.
//
// Without a bug, the message ends with the jobs' caveats (Sched.Caveats):
// what it says was explored may not be every trace.
func quicksandVerdict(s *quicksand.Sched, bugs int, interrupted bool) Verdict {
	v := quicksandOutcome(s, bugs, interrupted)
	if v.Outcome != Bug {
		for _, c := range s.Caveats() {
			v.Message += " " + CaveatLine(c)
		}
	}
	return v
}

// CaveatLine says a caveat and the jobs that gave it (the first five of
// more), as a sentence.
func CaveatLine(c quicksand.Caveat) string {
	var ids []string
	for i, id := range c.Jobs {
		if i == 5 && len(c.Jobs) > 6 {
			ids = append(ids, fmt.Sprintf("and %d more", len(c.Jobs)-i))
			break
		}
		ids = append(ids, fmt.Sprint(id))
	}
	return fmt.Sprintf("Caveat (%s %s): %s.", plural(len(c.Jobs), "job"), strings.Join(ids, ", "), c.Text)
}

func quicksandOutcome(s *quicksand.Sched, bugs int, interrupted bool) Verdict {
	max := s.Maximal()
	maxSet := s.Reg.Describe(s.Reg.All())
	timedOut, notStarted := 0, 0
	var limited []*quicksand.Job
	for _, j := range s.Jobs {
		switch j.Status {
		case quicksand.TimedOut:
			timedOut++
		case quicksand.NotStarted:
			notStarted++
		case quicksand.LimitReached:
			limited = append(limited, j)
		}
	}
	complete := len(s.Completed())
	switch {
	case bugs > 0:
		msg := fmt.Sprintf("%d %s found", bugs, plural(bugs, "bug"))
		if s.Opt.FirstBug && s.Now < s.Opt.Budget {
			msg += " (the first one ended the run, with budget left)"
		}
		return Verdict{Bug, store.StatusBug, msg}
	case len(limited) > 0:
		j := limited[0]
		msg := fmt.Sprintf("Limit: no bug found, but job %d (PPs %s) went past a limit of the checker and could not complete: %s.",
			j.ID, s.Reg.Describe(j.Set), j.Limit)
		if n := len(limited); n > 1 {
			msg = fmt.Sprintf("Limit: no bug found, but %d jobs went past a limit of the checker and could not complete; the first, job %d (PPs %s): %s.",
				n, j.ID, s.Reg.Describe(j.Set), j.Limit)
		}
		msg += fmt.Sprintf(" %d of %d jobs complete", complete, len(s.Jobs))
		if timedOut > 0 {
			msg += fmt.Sprintf(", %d timed out", timedOut)
		}
		if notStarted > 0 {
			msg += fmt.Sprintf(", %d never started", notStarted)
		}
		msg += "; not a verification."
		if interrupted {
			msg += " Interrupted: the run can be resumed."
		}
		return Verdict{Limit, store.StatusLimit, msg}
	case s.Verified():
		covered := "every data-race candidate"
		if n := len(s.Conflicts); n > 0 {
			covered += fmt.Sprintf(" and every atomic conflict (%d)", n)
		}
		return Verdict{Verified, store.StatusVerified, fmt.Sprintf(
			"Total verification: the maximal state space %s completed with no bug, and it covered %s.", maxSet, covered)}
	case interrupted:
		return Verdict{Interrupted, store.StatusStopped, fmt.Sprintf("Interrupted: %d of %d jobs complete; the run can be resumed.", complete, len(s.Jobs))}
	case timedOut == 0 && notStarted == 0 && max != nil && max.Status == quicksand.Complete:
		why := "their PPs could not be added"
		if s.Opt.Control {
			why = "--control never makes them PPs"
		}
		return Verdict{NoBug, store.StatusBounded, fmt.Sprintf(
			"No bug: every state space completed, the maximal one %s included; not a total verification: %s stayed uncovered (%s).",
			maxSet, uncoveredText(s), why)}
	}
	msg := fmt.Sprintf("Budget spent: %d of %d jobs complete, %d timed out", complete, len(s.Jobs), timedOut)
	if notStarted > 0 {
		msg += fmt.Sprintf(", %d never started", notStarted)
	}
	msg += "; "
	if max != nil && max.Status == quicksand.Complete {
		msg += fmt.Sprintf("the maximal state space %s completed, but %s stayed uncovered.", maxSet, uncoveredText(s))
	} else {
		msg += fmt.Sprintf("the maximal state space %s did not complete.", maxSet)
	}
	return Verdict{Budget, store.StatusBudget, msg}
}

// uncoveredText counts the uncovered data-race candidates, and the
// atomic conflicts if any: "1 data-race candidate and 2 atomic conflicts".
func uncoveredText(s *quicksand.Sched) string {
	n, m := len(s.UncoveredRaces()), len(s.UncoveredConflicts())
	var parts []string
	if n > 0 || m == 0 {
		parts = append(parts, fmt.Sprintf("%d data-race %s", n, plural(n, "candidate")))
	}
	if m > 0 {
		parts = append(parts, fmt.Sprintf("%d atomic %s", m, plural(m, "conflict")))
	}
	return strings.Join(parts, " and ")
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
