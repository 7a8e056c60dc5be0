package dpor

import (
	"context"
	"time"

	"landslide/record"
)

// Spec is an exploration's configuration as plain data: what a job's
// stored specification carries for this package. The zero value is DPOR
// with sleep sets, no limits, stopping at the first bug. In every field,
// zero means the default.
type Spec struct {
	// Strategy names the strategy (Strategies lists them; "" is "dpor").
	Strategy string `msgpack:",omitempty"`
	// Fallback (optimal) explores again from the root with the dpor
	// strategy where the exploration shows that optimal DPOR is not
	// exact on the program: a thread reaches an _xbegin (OptimalTMCaveat),
	// or an execution ends with every runnable thread asleep, which its
	// wakeup trees exclude where it is exact. The CLI's default strategy
	// is optimal DPOR with Fallback (Result.Fallback says when it fell
	// back, and why).
	Fallback bool `msgpack:",omitempty"`
	// NoSleepSets (dpor) turns the sleep-set refinement off.
	NoSleepSets bool
	// AllPairs (dpor) reverses every conflicting pair not ordered by the
	// scheduling happens-before, as the thesis does, instead of only the
	// direct races (see analysis.add).
	AllPairs bool
	// LandslideSleepSets (dpor) replaces the sleep sets by Landslide's
	// check (equiv_already_explored), which can leave final states out
	// where a step's accesses depend on the values it reads: only to
	// reproduce the thesis's figures.
	LandslideSleepSets bool `msgpack:",omitempty"`
	// MaxBound (icb) is the largest preemption bound explored; nil for no
	// cap (until a round drops no alternative).
	MaxBound *int
	// Seed (random, pct) seeds the walks: the random strategy's walk k uses
	// Seed+k-1, the same schedule as `landslide run --seed Seed+k-1`; PCT's
	// walk k draws from (Seed, k).
	Seed uint64 `msgpack:",omitempty"`
	// Depth (pct) is PCT's depth d: d-1 priority change points per execution (0: the default, 3).
	Depth int `msgpack:",omitempty"`
	// MaxInterleavings stops after that many interleavings (0: no limit).
	MaxInterleavings int
	// KeepGoing continues after a bug (the default stops at the first).
	KeepGoing bool
	// NoDepthHeuristic turns off the too-deep infinite-loop heuristic.
	NoDepthHeuristic bool
	// Transactional memory (htm.go): AbortCodes injects CONFLICT aborts
	// besides RETRY (the thesis's -A; the machine must distinguish
	// causes too), STM injects no RETRY (-S: conflict aborts only).
	AbortCodes bool `msgpack:",omitempty"`
	STM        bool `msgpack:",omitempty"`
	// RetrySets is the thesis's retry-set reduction (-R, retry.go).
	RetrySets bool `msgpack:",omitempty"`
	// WeakAtomicity (the thesis's -W; needs STM): transactions are
	// atomic only with respect to each other (the machine must run them
	// so, kernel's weak.go), and only a conflict with another
	// transaction aborts one.
	WeakAtomicity bool `msgpack:",omitempty"`
}

// Bound returns a MaxBound of b preemptions.
func Bound(b int) *int { return &b }

// Options are a Spec plus the hooks of one exploration.
type Options struct {
	Spec
	// keepSelfAborts turns stopAtSelfAbort off (tests compare the
	// exploration with and without it).
	keepSelfAborts bool
	// Now is the clock used for the time estimates (default: wall time
	// since the exploration started). It never influences what is explored.
	Now func() time.Duration
	// OnBranch sees every completed interleaving, while the machine is
	// still at its end; a reason other than Continue stops the
	// exploration there with that reason.
	OnBranch func(*Branch) Stop
	// PastLimits goes on after an execution that went past a checker
	// limit (Branch.Limit) instead of stopping: that execution ends
	// there, as one out of budget does (Result.Budgeted: no verdict of
	// verified), and Result.Limit keeps the first. For bug hunting: the
	// other executions may reach a bug before the limit.
	PastLimits bool
	// Expired, when set, is asked every ExpiredEvery steps of a branch:
	// true ends the exploration there at once, without a trace of that
	// branch (no OnBranch, no count): Result.Cut, and the Explorer,
	// left inside the branch, has no Frontier and cannot Run again. A
	// single execution of millions of steps thus keeps the caller's time
	// budget and answers an interrupt (job asks both). Counted as an
	// execution out of budget instead, the cut one would read as one the
	// program ran out of instructions in, and, stored, could never be
	// explored on resume; abandoned, a resume explores it again whole
	// from the store's last commit, as after a crash.
	Expired func() bool
	// Judge, when set, sees every interleaving that ended without a bug,
	// after the strategy has chosen the alternatives (so that a bug it
	// returns adds none: the interleaving was not cut short), and may
	// return a bug of the whole interleaving (a linearizability
	// violation). The Branch's HappensAfter is valid during the call.
	Judge func(*Branch) *record.Bug
	// Wanted, when set, says which bugs the exploration looks for: a
	// branch whose bug it refuses is explored past as if it had passed
	// (it is in no Result.Bug, and stops nothing). Minimization looks
	// for one bug so.
	Wanted func(*record.Bug) bool
	// Checkpoint, when set, offers a stored machine state on the way to
	// the end of prefix (the current branch's first choices): it returns
	// the state after the first depth choices, or nil. A resumed explorer
	// uses it to rebuild a node's snapshot without re-executing from the
	// program's start (see Resume).
	Checkpoint func(prefix []record.Choice) (depth int, s record.Snapshot)
}

// Stop is why an exploration ended before its state space was complete
// (Continue: it did not stop, or it completed).
type Stop uint8

// Reasons to stop.
const (
	Continue       Stop = iota
	StopBug             // a bug was found (without KeepGoing)
	StopLimit           // Spec.MaxInterleavings was reached
	StopBound           // the preemption bound dropped alternatives, and no larger bound is allowed
	StopBudget          // the caller's time budget ran out (OnBranch)
	StopControl         // the caller's control stopped it (OnBranch; Quicksand suspends jobs so)
	StopCanceled        // the context was canceled (an interrupt)
	StopRestricted      // the strategy left switch points out by design (CHESS-atomic)
	// StopCheckerLimit: an execution went past a limit of the machine
	// (live threads, guest memory: record.Bug.IsLimit), which is no bug
	// of the program; the exploration cannot cover that execution, so it
	// stops there (Result.Limit), whatever KeepGoing says.
	StopCheckerLimit
)

var stopNames = [...]string{"", "bug", "interleaving limit", "preemption bound", "budget", "stopped", "interrupted", "restricted switch points", "checker limit"}

// String is the reason as stored and printed ("budget", "interleaving
// limit", ...).
func (s Stop) String() string {
	if int(s) < len(stopNames) {
		return stopNames[s]
	}
	return "unknown"
}

// ParseStop reads a Stop back from its String.
func ParseStop(s string) Stop {
	for i, n := range stopNames {
		if n == s {
			return Stop(i)
		}
	}
	return Continue
}

// canceled reports whether ctx is done, without blocking.
func canceled(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}
