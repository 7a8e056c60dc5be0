// Package replay re-examines stored explorations without exploring again:
// it re-executes a stored trace (from the nearest stored checkpoint, or
// from the program's start) and checks that every transition is
// bit-identical to the stored one, and it re-runs data-race analysis over
// a run's stored interleavings, in either happens-before mode, without
// executing the program at all.
package replay

import (
	"errors"
	"fmt"

	"landslide/estimator"
	"landslide/job"
	"landslide/kernel"
	"landslide/race"
	"landslide/record"
	"landslide/report"
	"landslide/store"
)

// Options configure Trace.
type Options struct {
	// FromStart re-executes from the program's start even when a stored
	// checkpoint is nearer.
	FromStart bool
	// Step, when set, sees each re-executed transition (index in the trace).
	Step func(i int, tr *record.Transition)
}

// Result is a replayed trace.
type Result struct {
	// From is the depth the re-execution started at: 0 for the program's
	// start, else a checkpoint's depth (transitions before it are the
	// stored ones).
	From        int
	Transitions []*record.Transition
	Bug         *record.Bug
	// Report is the trace's readable report.
	Report *report.Trace
}

// ErrDiverged: the re-execution did not reproduce the stored transitions.
var ErrDiverged = errors.New("replay diverged from the stored trace")

// Load reads what replaying a job of a run needs: its spec (the job's own
// if it has one, as Quicksand's jobs do, else the run's), its job
// configuration (with the stored binary) and a fresh machine at the
// program's start.
func Load(st *store.Store, run *store.Run, jobID int) (job.Spec, job.Config, *kernel.Kernel, error) {
	spec, err := JobSpec(st, run, jobID)
	if err != nil {
		return spec, job.Config{}, nil, err
	}
	img, err := st.Binary(run.Binary)
	if err != nil {
		return spec, job.Config{}, nil, fmt.Errorf("run %s: its binary: %w", run.ID, err)
	}
	cfg := job.Config{Spec: spec, Image: img}
	k, err := kernel.New(img, spec.KernelConfig())
	if err != nil {
		return spec, cfg, nil, err
	}
	return spec, cfg, k, nil
}

// Trace re-executes a stored trace of run and renders its report.
func Trace(st *store.Store, run *store.Run, tr *store.TraceRecord, opt Options) (*Result, error) {
	spec, cfg, k, err := Load(st, run, tr.Job)
	if err != nil {
		return nil, err
	}
	n := len(tr.Choices)
	if len(tr.Transitions) != n || len(tr.Hashes) != n {
		return nil, fmt.Errorf("trace %d of run %s: %d choices, %d transitions, %d hashes", tr.ID, run.ID, n, len(tr.Transitions), len(tr.Hashes))
	}
	res := &Result{Transitions: make([]*record.Transition, 0, n)}
	if !opt.FromStart {
		machine := job.MachineID(run.Binary, &spec)
		for d := n; d > 0; d-- {
			h := store.PrefixHash(tr.Choices[:d])
			if have, _ := st.HasCheckpoint(machine, h); !have {
				continue
			}
			rec, err := st.Checkpoint(machine, h)
			if err != nil {
				continue
			}
			snap, err := k.DecodeCheckpoint(job.KernelCheckpoint(rec))
			if err != nil {
				continue // a damaged checkpoint: try an earlier one
			}
			k.Restore(snap)
			res.From = d
			res.Transitions = append(res.Transitions, tr.Transitions[:d]...)
			break
		}
	}
	for i := res.From; i < n; i++ {
		if done, _ := k.Ended(); done {
			return nil, fmt.Errorf("%w: the program ended after %d of %d transitions", ErrDiverged, i, n)
		}
		t, err := k.Step(tr.Choices[i])
		if err != nil && !errors.Is(err, record.ErrBudget) {
			return nil, fmt.Errorf("%w: transition %d: %v", ErrDiverged, i, err)
		}
		if record.Hash([]*record.Transition{t}) != tr.Hashes[i] {
			return nil, fmt.Errorf("%w: transition %d (thread %d) differs", ErrDiverged, i, tr.Choices[i].Thread)
		}
		if opt.Step != nil {
			opt.Step(i, t)
		}
		res.Transitions = append(res.Transitions, t)
	}
	_, res.Bug = k.Ended()
	var races []*job.RaceReport
	if rr, err := st.Races(run.ID, tr.Job); err == nil {
		for _, r := range rr {
			races = append(races, &job.RaceReport{Candidate: &r.Candidate, StackA: r.StackA, StackB: r.StackB, Data: r.Data})
		}
	}
	ppset := job.DescribePPs(k, cfg)
	interleavings := 0
	var est estimator.Estimate
	if jb, err := st.Job(run.ID, tr.Job); err == nil {
		interleavings = jb.Executed
		est = estimator.Estimate{Size: jb.EstSize, Proportion: jb.EstProportion}
	}
	if res.Bug != nil {
		res.Report = job.NewTrace(cfg, k.Symbols(), ppset, races, res.Bug, res.Transitions, tr.Choices, tr.Preempted, interleavings, est)
	}
	return res, nil
}

// Races re-runs data-race analysis in mode over the stored interleavings
// of one job of run, in their order, without executing the program. It
// returns the candidates and the number of interleavings analysed.
func Races(st *store.Store, run *store.Run, jobID int, mode race.Mode) ([]*race.Candidate, int, error) {
	spec, err := JobSpec(st, run, jobID)
	if err != nil {
		return nil, 0, err
	}
	jb, err := st.Job(run.ID, jobID)
	if err != nil {
		return nil, 0, err
	}
	an := race.New(mode, race.Options{TestingMutexes: spec.TestingMutexes})
	var cur []*record.Transition
	n := 0
	err = st.Branches(run.ID, jobID, func(b *store.BranchRecord) error {
		if b.N != n+1 {
			return fmt.Errorf("interleaving %d is missing from the store (found %d next)", n+1, b.N)
		}
		if b.Div > len(cur) {
			return fmt.Errorf("interleaving %d: diverges at transition %d of %d", b.N, b.Div, len(cur))
		}
		cur = append(cur[:b.Div], b.Transitions...)
		for _, p := range b.Pairs {
			if p[0] < 0 || p[0] >= p[1] || p[1] >= len(cur) {
				return fmt.Errorf("interleaving %d: pair %v out of range", b.N, p)
			}
		}
		an.Branch(cur, b.Pairs)
		n++
		return nil
	})
	if err != nil {
		return nil, n, fmt.Errorf("run %s job %d: %w", run.ID, jobID, err)
	}
	if n != jb.Executed {
		return nil, n, fmt.Errorf("run %s job %d: %d interleavings explored but %d stored (was it run with --no-branch-log?)", run.ID, jobID, jb.Executed, n)
	}
	return an.Candidates(), n, nil
}

// JobSpec is the configuration of a job of run: its own stored spec, or
// the run's.
func JobSpec(st *store.Store, run *store.Run, jobID int) (job.Spec, error) {
	jb, err := st.Job(run.ID, jobID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return job.Spec{}, err
	}
	if jb != nil && len(jb.Spec) > 0 {
		return job.DecodeSpec(jb.Spec)
	}
	return job.DecodeSpec(run.Spec)
}
