package cli

import (
	"fmt"

	"landslide/quicksand"
	"landslide/store"
)

// qsVerdict is how a Quicksand run ended, derived from its final job table
// alone (quicksandVerdict): the exit code, the stored run status, and the
// sentence the report and the store give.
type qsVerdict struct {
	Code    int
	Status  store.Status
	Message string
}

// quicksandVerdict derives the verdict from the job table; bugs is the
// number of distinct bugs (deduplicated by signature). No other code
// decides a Quicksand run's exit code or verdict.
//
//   - A bug: exit 1.
//   - Total verification (Sched.Verified): exit 0.
//   - Every job ended without a bug and none ran out of budget, but
//     data-race candidates stayed uncovered (--control, where races add no
//     PPs; or race PPs a without filter excludes): exit 0, no bug in the
//     PP sets explored, and not a total verification.
//   - A job ran out of budget (timed out): exit 3.
func quicksandVerdict(s *quicksand.Sched, bugs int) qsVerdict {
	max := s.Maximal()
	maxSet := s.Reg.Describe(s.Reg.All())
	timedOut := 0
	for _, j := range s.Jobs {
		if j.Status == quicksand.TimedOut {
			timedOut++
		}
	}
	complete := len(s.Completed())
	switch {
	case bugs > 0:
		msg := fmt.Sprintf("%d %s found", bugs, plural(bugs, "bug"))
		if s.Opt.FirstBug && s.Now < s.Opt.Budget {
			msg += " (the first one ended the run, with budget left)"
		}
		return qsVerdict{ExitBug, store.StatusBug, msg}
	case s.Verified():
		return qsVerdict{ExitOK, store.StatusVerified, fmt.Sprintf(
			"Total verification: the maximal state space %s completed with no bug, and it covered every data-race candidate.", maxSet)}
	case timedOut == 0 && max != nil && max.Status == quicksand.Complete:
		n := len(s.UncoveredRaces())
		why := "their PPs could not be added"
		if s.Opt.Control {
			why = "--control never makes them PPs"
		}
		return qsVerdict{ExitOK, store.StatusBounded, fmt.Sprintf(
			"No bug: every state space completed, the maximal one %s included; not a total verification: %d data-race %s stayed uncovered (%s).",
			maxSet, n, plural(n, "candidate"), why)}
	}
	msg := fmt.Sprintf("Budget spent: %d of %d jobs complete, %d timed out; ", complete, len(s.Jobs), timedOut)
	if max != nil && max.Status == quicksand.Complete {
		n := len(s.UncoveredRaces())
		msg += fmt.Sprintf("the maximal state space %s completed, but %d data-race %s stayed uncovered.", maxSet, n, plural(n, "candidate"))
	} else {
		msg += fmt.Sprintf("the maximal state space %s did not complete.", maxSet)
	}
	return qsVerdict{ExitBudget, store.StatusBudget, msg}
}
