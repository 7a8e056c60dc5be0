package check

import (
	"context"
	"errors"
	"fmt"
	"time"

	"landslide/job"
	"landslide/store"
)

// ExploreResult is what Explore established.
type ExploreResult struct {
	*job.Result
	Verdict Verdict
	Run     *store.Run // the stored run (nil without a store)
	// Narrow, when a budget stopped an exploration whose PP set the
	// thread library's lifecycle dominates, are the directives that
	// would narrow it (NarrowingDirectives; set by the caller).
	Narrow []string
	// NarrowInside of NarrowAll PPs of one run were in the lifecycle.
	NarrowInside, NarrowAll int
}

// ErrLimitReached: a stored run stopped at a limit of the checker, and
// resuming it under the same limits cannot complete it.
var ErrLimitReached = errors.New("the run stopped at a limit of the checker; explore it again with the limit raised")

// DefaultExploreBudget is the time budget of `landslide explore` when
// none is given (a Spec's zero Budget is no budget at all).
const DefaultExploreBudget = time.Hour

// Explore explores one state space: cfg's program under its PP set, with
// its strategy, until it completes, a bug or a limit stops it, or ctx is
// canceled. With rec.Store the exploration is a new stored run, committed
// as it goes (a crash loses at most the work since the last commit) and
// resumable (ResumeExplore).
func Explore(ctx context.Context, cfg job.Config, rec Recording) (*ExploreResult, error) {
	var run *store.Run
	if rec.Store != nil {
		var err error
		if run, err = rec.newRun("explore", cfg.Spec, cfg.Image); err != nil {
			return nil, err
		}
		cfg.Persist = rec.persist(run, 1)
	}
	return explore(ctx, cfg, run)
}

func explore(ctx context.Context, cfg job.Config, run *store.Run) (*ExploreResult, error) {
	res, err := job.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &ExploreResult{Result: res, Verdict: exploreVerdict(res), Run: run}, nil
}

// Overrides are what a resume may change: zero keeps the run's own.
type Overrides struct {
	Budget time.Duration // the total budget, the time already spent included
	// MaxInterleavings in all, the stored ones included (nil: the run's
	// own; 0: no limit).
	MaxInterleavings *int
}

// ResumeExplore continues a stored explore run from its last commit, with
// the same specification (but o's budget and limit), and ends with the
// result an uninterrupted run would have had. A run that stopped at a
// checker limit is not resumed: its state space cannot complete under
// the same limits (going on past the execution it could not cover could
// end in a false "verified").
func ResumeExplore(ctx context.Context, rec Recording, run *store.Run, o Overrides, hooks job.Hooks) (*ExploreResult, error) {
	if run.Status == store.StatusLimit {
		return nil, fmt.Errorf("run %s: %w: %s", run.ID, ErrLimitReached, run.Message)
	}
	spec, img, err := rec.stored(run)
	if err != nil {
		return nil, err
	}
	if o.Budget != 0 {
		spec.Budget = o.Budget
	}
	if o.MaxInterleavings != nil {
		spec.MaxInterleavings = *o.MaxInterleavings
	}
	cfg := job.Config{Spec: spec, Image: img, Hooks: hooks}
	cfg.Persist = rec.persist(run, 1)
	cfg.Persist.Resume = true
	return explore(ctx, cfg, run)
}
