package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"landslide/job"
	"landslide/minimize"
	"landslide/record"
	"landslide/replay"
	"landslide/report"
	"landslide/store"
)

// Minimized is a bug trace minimized (package minimize): the same bug
// with the fewest preemptions, and its nearest passing interleaving.
type Minimized struct {
	// Trace is the minimal trace's report (Trace.Minimized says how).
	Trace *report.Trace
	// Result is the search's (nil when a stored minimization was reused).
	Result *minimize.Result
	// Stored is the minimal trace's record in the store (nil: not kept).
	Stored *store.TraceRecord
	// Reused: the store already held a proved minimization of the trace.
	Reused bool
}

// MinimizeShare is the share of an exploration's budget that minimizing
// its bug may take (after the exploration), at most MaxMinimizeBudget.
const (
	MinimizeShare     = 10 // a tenth
	MaxMinimizeBudget = time.Minute
)

// MinimizeBudget is the time minimizing a bug found under budget may
// take: a tenth of it, at least a second, at most MaxMinimizeBudget.
func MinimizeBudget(budget time.Duration) time.Duration {
	if budget <= 0 {
		return MaxMinimizeBudget
	}
	return min(max(budget/MinimizeShare, time.Second), MaxMinimizeBudget)
}

// MinimizeFound minimizes the bug an exploration of cfg just found (r
// has a BugBranch), within budget, and keeps the minimal trace in r's
// stored run, if any, next to the original.
func MinimizeFound(ctx context.Context, cfg job.Config, r *ExploreResult, st *store.Store, budget time.Duration) (*Minimized, error) {
	b := r.BugBranch
	if b == nil {
		return nil, errors.New("minimize: the exploration found no bug")
	}
	_, sig := job.Signature(r.Syms, b.Bug)
	res, err := minimize.Minimize(ctx, minimize.Input{Config: job.Config{Spec: cfg.Spec, Image: cfg.Image},
		Signature: sig, Choices: b.Choices, Preempted: b.Preempted, Preemptions: b.Preemptions, Budget: budget, Races: r.Races})
	if err != nil {
		return nil, err
	}
	m := &Minimized{Trace: res.Trace, Result: res}
	if t := r.Trace; t != nil {
		// The report's figures are the exploration's, not the search's.
		m.Trace.Interleavings, m.Trace.EstimatedSize, m.Trace.Coverage = t.Interleavings, t.EstimatedSize, t.Coverage
		m.Trace.PPSet = t.PPSet
	}
	if st != nil && r.Run != nil {
		orig := &store.TraceRecord{Run: r.Run.ID, Job: 1, ID: 1}
		if err := keepMinimal(st, orig, m); err != nil {
			return m, &StoreError{Dir: st.Dir(), Err: err}
		}
	}
	return m, nil
}

// MinimizeLimits bound a minimization's search: time, interleavings
// (for a deterministic run, whose clock counts them), or both; zero is
// no bound.
type MinimizeLimits struct {
	Budget        time.Duration
	Interleavings int
}

// MinimizeStored minimizes the stored bug trace tr of run within lim
// and keeps the minimal trace in the store next to it (a trace of Kind
// store.TraceMinimal whose Of is tr's ID). A minimization already stored
// and proved minimal is reused, not searched again.
func MinimizeStored(ctx context.Context, st *store.Store, run *store.Run, tr *store.TraceRecord, lim MinimizeLimits, hooks job.Hooks) (*Minimized, error) {
	if tr.Kind == store.TraceMinimal {
		orig, err := st.Trace(run.ID, tr.Job, tr.Of)
		if err != nil {
			return nil, fmt.Errorf("trace %d of job %d is a minimization of trace %d, which is not stored: %w", tr.ID, tr.Job, tr.Of, err)
		}
		tr = orig
	}
	if prev, err := storedMinimal(st, run.ID, tr); err != nil {
		return nil, &StoreError{Dir: st.Dir(), Err: err}
	} else if prev != nil {
		if acc := minimizedAccount(prev); acc != nil && acc.Proved {
			rep, err := Replay(st, run, prev, ReplayOptions{})
			if err != nil {
				return nil, err
			}
			if rep.Report == nil {
				return nil, fmt.Errorf("the stored minimal trace %s/%d/%d ends without a bug", run.ID, prev.Job, prev.ID)
			}
			return &Minimized{Trace: rep.Report, Stored: prev, Reused: true}, nil
		}
	}
	bug, err := bugOf(st, run.ID, tr)
	if err != nil {
		return nil, err
	}
	spec, cfg, _, err := replay.Load(st, run, tr.Job)
	if err != nil {
		return nil, &StoreError{Dir: st.Dir(), Err: err}
	}
	cfg.Spec, cfg.Hooks = spec, hooks
	recs, err := st.Races(run.ID, tr.Job)
	if err != nil {
		return nil, &StoreError{Dir: st.Dir(), Err: err}
	}
	races := []*job.RaceReport{}
	for _, r := range recs {
		races = append(races, &job.RaceReport{Candidate: &r.Candidate, StackA: r.StackA, StackB: r.StackB, Data: r.Data})
	}
	res, err := minimize.Minimize(ctx, minimize.Input{Config: cfg, Signature: bug.Signature, Choices: tr.Choices,
		Preempted: tr.Preempted, Preemptions: minimize.Count(tr.Preempted), Budget: lim.Budget, MaxInterleavings: lim.Interleavings, Races: races})
	if err != nil {
		return nil, err
	}
	m := &Minimized{Trace: res.Trace, Result: res}
	if jb, err := st.Job(run.ID, tr.Job); err == nil {
		m.Trace.Interleavings, m.Trace.EstimatedSize, m.Trace.Coverage = jb.Executed, jb.EstSize, jb.EstProportion
	}
	for _, r := range recs {
		rr := report.NewRace(&r.Candidate, r.StackA, r.StackB)
		rr.Data = r.Data
		m.Trace.Races = append(m.Trace.Races, rr)
	}
	if st.ReadOnly() {
		return m, nil
	}
	if err := keepMinimal(st, tr, m); err != nil {
		return m, &StoreError{Dir: st.Dir(), Err: err}
	}
	return m, nil
}

// bugOf is the bug record of the stored bug trace tr.
func bugOf(st *store.Store, run string, tr *store.TraceRecord) (*store.BugRecord, error) {
	bugs, err := st.Bugs(run)
	if err != nil {
		return nil, &StoreError{Dir: st.Dir(), Err: err}
	}
	for _, b := range bugs {
		if b.Job == tr.Job && b.Trace == tr.ID {
			return b, nil
		}
	}
	return nil, fmt.Errorf("trace %s/%d/%d is no bug's trace: there is nothing to minimize", run, tr.Job, tr.ID)
}

// storedMinimal is the stored minimization of trace orig (nil: none).
func storedMinimal(st *store.Store, run string, orig *store.TraceRecord) (*store.TraceRecord, error) {
	trs, err := st.Traces(run)
	if err != nil {
		return nil, err
	}
	for _, t := range trs {
		if t.Job == orig.Job && t.Kind == store.TraceMinimal && t.Of == orig.ID {
			return t, nil
		}
	}
	return nil, nil
}

// keepMinimal stores m's trace as the minimization of orig (replacing an
// earlier one), and records where it is in m.
func keepMinimal(st *store.Store, orig *store.TraceRecord, m *Minimized) error {
	res := m.Result
	trs, err := st.Traces(orig.Run)
	if err != nil {
		return err
	}
	id := 0
	for _, t := range trs {
		if t.Job != orig.Job {
			continue
		}
		if t.Kind == store.TraceMinimal && t.Of == orig.ID {
			id = t.ID // replaced
			break
		}
		id = max(id, t.ID+1)
	}
	m.Trace.Minimized.Original = fmt.Sprintf("%s/%d/%d", orig.Run, orig.Job, orig.ID)
	acc, err := json.Marshal(m.Trace.Minimized)
	if err != nil {
		return err
	}
	rec := &store.TraceRecord{Run: orig.Run, Job: orig.Job, ID: id, Kind: store.TraceMinimal, Of: orig.ID,
		Choices: slices.Clone(res.Choices), Transitions: res.Transitions, Preempted: slices.Clone(res.Preempted), Explain: string(acc)}
	for i := range res.Transitions {
		rec.Hashes = append(rec.Hashes, record.Hash(res.Transitions[i:i+1]))
	}
	if err := st.Commit(&store.Commit{Traces: []*store.TraceRecord{rec}, Flush: true}); err != nil {
		return err
	}
	m.Stored = rec
	return nil
}

// minimizedAccount is a minimal trace's stored account (nil: none, or
// unreadable).
func minimizedAccount(t *store.TraceRecord) *report.Minimized {
	if t.Kind != store.TraceMinimal || t.Explain == "" {
		return nil
	}
	var m report.Minimized
	if json.Unmarshal([]byte(t.Explain), &m) != nil {
		return nil
	}
	return &m
}
