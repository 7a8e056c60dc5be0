package check

import (
	"fmt"

	"landslide/dpor"
	"landslide/record"
	"landslide/svcomp"
)

// SVCOMPVerdict is the SV-COMP verdict on unreach-call of an exploration
// in SV-COMP mode (kernel.Config.SVCOMP), and the reason for it:
//   - false: an execution called reach_error (record.BugReachError) on a
//     trace SV-COMP's semantics allows;
//   - true: the state space, with every shared access a PP, completed
//     with no bug, no execution ran out of budget, every __VERIFIER_nondet value of the program's types was
//     explored and every spurious wake-up a condition wait may take
//     (job.Result.NondetSampled), and no violation was set aside
//     (job.Result.SetAside);
//   - unknown otherwise: another kind of bug (a segmentation fault, a
//     heap error, a loop: no violation of unreach-call, and no
//     verification either), a limit of the checker, the budget, sampled
//     nondet values, or violations set aside.
func SVCOMPVerdict(r *ExploreResult) (svcomp.Verdict, string) {
	switch {
	case r.Bug != nil && r.Bug.Kind == record.BugReachError:
		return svcomp.False, r.Bug.Message
	case r.Bug != nil:
		return svcomp.Unknown, fmt.Sprintf("%s: %s (not reach_error: no verdict)", r.Bug.Kind, r.Bug.Message)
	case r.Stopped == dpor.StopCheckerLimit && r.Limit != nil:
		return svcomp.Unknown, "limit: " + r.Limit.Message
	case !r.Verified:
		why := "the budget ran out"
		if r.Stopped == dpor.StopCanceled {
			why = "interrupted"
		} else if r.Budgeted > 0 && r.Complete {
			why = fmt.Sprintf("%d executions ran out of instructions", r.Budgeted)
		}
		return svcomp.Unknown, fmt.Sprintf("%s after %d interleavings", why, r.Interleavings)
	case !r.EveryAccess:
		return svcomp.Unknown, "verified for this PP set only: --every-access makes every shared access a PP"
	case r.SetAside > 0:
		return svcomp.Unknown, fmt.Sprintf("reach_error reached only on traces that interleave an atomic section (%d set aside)", r.SetAside)
	case r.NondetSampled:
		return svcomp.Unknown, "sampled: a __VERIFIER_nondet call's domain was cut (LANDSLIDE_NONDET_MIN/MAX), or a thread's second spurious wake-up was not explored"
	}
	return svcomp.True, ""
}
