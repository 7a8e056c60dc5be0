// Package job explores one state space: a program under one PP set,
// explored with DPOR on its own machine, with data-race analysis of every
// interleaving, the estimates, and a readable trace of the bug if one is
// found (thesis §3.4; the brief's "job"). `landslide explore` runs one job;
// Quicksand (a later layer) runs many.
//
// With Spec.Linearizability the job first learns the program's sequential
// specification and checks every interleaving's calls against it
// (lineup.go, package linearize).
//
// With Config.Persist a job commits itself to a store in batches and can
// be resumed from its last commit (persist.go: the stored spec, frontier,
// race state, interleaving log, race candidates, checkpoints and bug).
package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"landslide/dpor"
	"landslide/emu/elfsym"
	"landslide/estimator"
	"landslide/kernel"
	"landslide/race"
	"landslide/record"
	"landslide/report"
	"landslide/store"
)

// Spec is a job's specification as plain data: the program, its PP set
// and limits, the exploration strategy and its bounds, the race analysis
// and the budget. The store persists it as it is (EncodeSpec); everything
// that is not data (the image, clocks, callbacks, the store) is in Hooks.
// In every field, zero means the default.
type Spec struct {
	Program string // the ELF's path (for reports)
	// Kernel is the machine's configuration: the PP set (SyncPPs,
	// DataRacePCs, Filters, SharedStack), limits and guest arguments, as
	// ResolvePPs makes it.
	Kernel kernel.Config
	// PreemptEverywhere records that Kernel.DataRacePCs is every shared
	// access (the thesis's -0): reports say so instead of listing them.
	PreemptEverywhere bool
	// The exploration: strategy, bounds, limits (inlined when stored).
	dpor.Spec
	// HB selects the data-race analysis (default Limited).
	HB race.Mode
	// TestingMutexes treats accesses inside the mutex implementation as
	// unprotected (a program testing its mutexes declares it:
	// LANDSLIDE_CONFIG("testing_mutexes")).
	TestingMutexes bool
	// Budget stops the exploration after this much time (0: none).
	Budget time.Duration
	// Linearizability checks every interleaving's calls (sdk's lineup.h)
	// against the sequential specification learned first (lineup.go).
	Linearizability bool `msgpack:",omitempty"`
}

// KernelConfig is the machine's configuration: Kernel, with what the
// exploration options ask of the machine (transactional abort causes,
// weak atomicity).
func (s Spec) KernelConfig() kernel.Config {
	k := s.Kernel
	k.HTM.AbortCodes = s.AbortCodes
	k.HTM.Weak = s.WeakAtomicity
	return k
}

// Config is a job: its Spec, the program image, and the hooks.
type Config struct {
	Spec
	Image []byte
	Hooks
}

// Hooks are what a job reports to and is steered by; none is part of
// the job's specification.
type Hooks struct {
	// Progress, when set, is called after an interleaving at most once
	// per ProgressEvery (default 10 s), and once at the end.
	Progress      func(Progress)
	ProgressEvery time.Duration
	// Now is the clock (default wall time since the start); tests inject
	// one. It decides only budgets, progress and estimates, never what is
	// explored.
	Now func() time.Duration
	// Persist, when set, keeps the job in a store (see Persist).
	Persist *Persist
	// Control, when set, sees every interleaving as it completes (before
	// it is committed), with the race candidates it found or changed;
	// returning false stops the exploration there (dpor.StopControl),
	// resumable from the store like a budget stop. Quicksand steers its
	// jobs with it.
	Control func(Step) bool
	// Wanted, when set, says which bugs the job looks for
	// (dpor.Options.Wanted): the others are explored past.
	Wanted func(*record.Bug) bool
	// PastLimits: an execution that goes past a checker limit ends
	// there and the exploration goes on (dpor.Options.PastLimits), for
	// bug hunting; the job is then never verified.
	PastLimits bool
}

// Step is what Control sees of one interleaving.
type Step struct {
	Interleavings int // so far, this one included
	Estimate      estimator.Estimate
	Wall          time.Duration // the job's clock (see Progress)
	// Races are the candidates this interleaving found or reclassified;
	// Conflicts the atomic conflicts likewise (race.Analyzer.Conflicts:
	// never data races; Quicksand makes them PPs too).
	Races     []*race.Candidate
	Conflicts []*race.Candidate
}

// Progress is a progress report.
type Progress struct {
	Interleavings int
	Estimate      estimator.Estimate // the raw estimate after the last interleaving
	// Forecast is the ETA smoothed over the recent interleavings, with a
	// range (estimator.Smoother), in the estimator's time.
	Forecast estimator.Forecast
	// Wall is the job's clock (runs it resumes included); the estimator's
	// Elapsed leaves out the analysis between interleavings.
	Wall  time.Duration
	Races int
	Final bool
}

// Result is what a job established.
type Result struct {
	*dpor.Result
	// Verified: the state space completed without a bug (for this PP set),
	// and no execution ran out of its instruction budget.
	Verified bool
	Races    []*RaceReport
	// Conflicts are the atomic conflicts (race.Analyzer.Conflicts): no
	// data races, and not in Races.
	Conflicts []*race.Candidate
	// SharedStack are the stack locations another thread than their
	// owner accessed (kernel.Kernel.SharedStackSeen): a later state space
	// given them (kernel.Config.SharedStack) also records the owner's own
	// accesses there, so its races on them can become PPs.
	SharedStack []uint64
	// Trace is the failing interleaving's report (nil without a bug).
	Trace *report.Trace
	// LimitReplay is the `landslide run` command that replays the
	// execution that went past a checker limit (Stopped is
	// dpor.StopCheckerLimit; Limit says which limit).
	LimitReplay string
	Elapsed     time.Duration
	// PPSet describes the PP set in words.
	PPSet []string
	Syms  *elfsym.Symbols
	// Store sums what the job's commits wrote (with Config.Persist).
	Store store.CommitStats
	// SpecOrders is the number of orders of the calls the sequential
	// specification has (with Linearizability).
	SpecOrders int
	// NondetSampled: an execution called a __VERIFIER_nondet function
	// whose domain the build cut below its type's, or made a condition
	// wait whose spurious wake-up was not explored
	// (kernel.Kernel.Sampled): the exploration covered a sample of the
	// values (counted in this process only).
	NondetSampled bool
	// SetAside counts the violations (record.BugReachError) found, in
	// SV-COMP mode, on traces that ran a thread inside another's atomic
	// section (kernel.AtomicBrokenDetail): SV-COMP's semantics may not
	// allow them, so the exploration went past them (in this process).
	SetAside int
	// SVCOMP: the exploration ran in SV-COMP mode (kernel.Config.SVCOMP).
	SVCOMP bool
	// EveryAccess: every shared access was a PP (kernel.Config.EveryAccess
	// or Spec.PreemptEverywhere), so a verification covers every
	// interleaving of the program, not of a PP set.
	EveryAccess bool
}

// RaceReport is a data-race candidate with both accesses' stacks.
type RaceReport struct {
	*race.Candidate
	StackA, StackB []report.Frame
	// Data names the racing memory as the machine had it when the
	// candidate was found (kernel.Kernel.DataName: a global and offset,
	// a heap block by the function that allocated it, a thread's
	// stack); "" when none of these.
	Data string
}

// Run builds the machine and explores until the state space is complete,
// a bug, a limit or the budget stops it, or ctx is canceled (then
// Result.Stopped is dpor.StopCanceled and, with Persist, the job is
// committed and resumable).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.HB == 0 {
		cfg.HB = race.Limited
	}
	if cfg.PreemptEverywhere && len(cfg.Kernel.DataRacePCs) == 0 {
		return nil, errors.New("job: PreemptEverywhere with no data-race PCs (ResolvePPs fills them)")
	}
	k, err := kernel.New(cfg.Image, cfg.Spec.KernelConfig())
	if err != nil {
		return nil, err
	}
	j := &runner{cfg: cfg, k: k, syms: k.Symbols(), an: race.New(cfg.HB, race.Options{TestingMutexes: cfg.TestingMutexes})}
	return j.run(ctx)
}

// errBudget is the cause of the context cancellation the budget makes.
var errBudget = errors.New("budget")

type runner struct {
	cfg      Config
	k        *kernel.Kernel
	syms     *elfsym.Symbols
	an       *race.Analyzer
	x        *dpor.Explorer
	stacks   map[[2]uint64][2][]report.Frame // per candidate, symbolized once
	names    map[[2]uint64]string            // per candidate, its data's name (RaceReport.Data)
	races    int
	lastProg time.Duration
	now      func() time.Duration
	smooth   estimator.Smoother
}

func (j *runner) run(parent context.Context) (*Result, error) {
	cfg := j.cfg
	j.stacks = map[[2]uint64][2][]report.Frame{}
	j.names = map[[2]uint64]string{}
	var ps *persister
	var fr *dpor.Frontier
	var before time.Duration // spent by the runs this one resumes
	if cfg.Persist != nil {
		var err error
		if ps, err = newPersister(cfg.Persist, j); err != nil {
			return nil, err
		}
		if cfg.Persist.Resume {
			var err error
			if fr, before, err = ps.load(); err != nil {
				return nil, err
			}
		}
	}
	j.now = cfg.Now
	if j.now == nil {
		start := time.Now()
		j.now = func() time.Duration { return before + time.Since(start) }
	}
	now := j.now
	every := cfg.ProgressEvery
	if every == 0 {
		every = 10 * time.Second
	}
	j.lastProg = now()
	// The budget cancels the exploration from the job's own clock, after
	// an interleaving: the explorer then stops as for an interrupt, with
	// its state that of the last interleaving, and the cause says which.
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	opt := dpor.Options{Spec: cfg.Spec.Spec, Now: now, Wanted: cfg.Wanted, PastLimits: cfg.PastLimits}
	setAside := 0
	if cfg.Spec.Kernel.SVCOMP {
		opt.Wanted = svcompWanted(cfg.Wanted, &setAside)
	}
	if !cfg.Spec.Kernel.ThesisHeuristics {
		// The depth heuristic (a branch 20× deeper than the completed
		// ones is an infinite loop, thesis §3.4.6 (a)) reports a bug
		// on correct programs whose executions differ in depth: a
		// POSIX exit that cuts every thread short, then an execution
		// that runs them all (SCTBench's micro_2_ok under a PCT walk:
		// 283 PPs against an average of 6). It is one of the thesis's
		// heuristics, on only with them.
		opt.NoDepthHeuristic = true
	}
	var orders int
	if cfg.Linearizability {
		spec, err := learnSpec(ctx, cfg)
		if err != nil {
			return nil, err
		}
		opt.Judge, orders = lineupJudge(spec), spec.Orders()
	}
	// The budget and an interrupt inside a long execution too (between
	// interleavings, OnBranch and the context see to them): the
	// execution is abandoned (dpor.Options.Expired); a stored job's
	// store keeps its last commit, from which a resume explores it again
	// (persister.commitCut).
	opt.Expired = func() bool { return cfg.Budget > 0 && now() >= cfg.Budget || ctx.Err() != nil }
	opt.OnBranch = func(b *dpor.Branch) dpor.Stop {
		if cfg.Budget > 0 && now() >= cfg.Budget {
			cancel(errBudget)
		}
		j.smooth.Observe(b.Estimate)
		changed, conflicts := j.an.BranchAll(b.Transitions, b.NewPairs)
		j.captureStacks(changed)
		keep := true
		if cfg.Control != nil {
			keep = cfg.Control(Step{Interleavings: b.N, Estimate: b.Estimate, Wall: now(), Races: changed, Conflicts: conflicts})
		}
		if ps != nil {
			ps.branch(b, changed)
			if ps.err != nil {
				return dpor.StopControl // Run returns the store's error
			}
		}
		if cfg.Progress != nil && now()-j.lastProg >= every {
			j.lastProg = now()
			cfg.Progress(Progress{Interleavings: b.N, Estimate: b.Estimate, Forecast: j.smooth.Forecast(), Wall: j.lastProg, Races: len(j.an.Candidates())})
		}
		if !keep {
			return dpor.StopControl
		}
		return dpor.Continue
	}
	if fr != nil {
		opt.Checkpoint = ps.checkpoint
		var err error
		if j.x, err = dpor.Resume(j.k, opt, fr); err != nil {
			return nil, err
		}
	} else {
		var err error
		if j.x, err = dpor.New(j.k, opt); err != nil {
			return nil, err
		}
	}
	res, err := j.x.Run(ctx)
	if err == nil && res.Stopped == dpor.StopCanceled && errors.Is(context.Cause(ctx), errBudget) {
		res.Stopped = dpor.StopBudget
	}
	if ps != nil {
		if werr := ps.wait(); ps.err == nil {
			ps.err = werr
		}
	}
	if err != nil {
		return nil, err
	}
	if ps != nil && ps.err != nil {
		return nil, fmt.Errorf("store: %w", ps.err)
	}
	if cfg.Spec.Kernel.ThesisHeuristics && !strings.Contains(res.Caveat, kernel.ThesisHeuristicsCaveat) {
		if res.Caveat != "" {
			res.Caveat += "; "
		}
		res.Caveat += kernel.ThesisHeuristicsCaveat
	}
	out := &Result{Result: res, Elapsed: now(), PPSet: DescribePPs(j.k, cfg), Syms: j.syms,
		SharedStack: j.k.SharedStackSeen(), SpecOrders: orders, NondetSampled: j.k.Sampled(), SetAside: setAside, SVCOMP: cfg.Spec.Kernel.SVCOMP,
		EveryAccess: cfg.Spec.Kernel.EveryAccess || cfg.Spec.PreemptEverywhere}
	// An execution that ran out of instructions did not end: what it
	// would have done was not explored.
	out.Verified = res.Complete && res.Bug == nil && res.Budgeted == 0
	for _, c := range j.an.Candidates() {
		st := j.stacks[c.Key()]
		out.Races = append(out.Races, &RaceReport{Candidate: c, StackA: st[0], StackB: st[1], Data: j.names[c.Key()]})
	}
	out.Conflicts = j.an.Conflicts()
	if res.BugBranch != nil {
		out.Trace = j.trace(res, out)
	}
	if res.Limit != nil {
		out.LimitReplay = ReplayCommand(cfg.Spec, res.LimitChoices)
	}
	if ps != nil {
		if err := ps.finish(out); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out.Store = ps.stats
	}
	if cfg.Progress != nil {
		cfg.Progress(Progress{Interleavings: res.Executed, Estimate: res.Estimate, Forecast: j.smooth.Forecast(), Wall: out.Elapsed, Races: len(out.Races), Final: true})
	}
	return out, nil
}

// captureStacks gets the stacks at the racing accesses of the new
// candidates of a branch: each transition holding one of their accesses
// is re-run once (kernel.AccessStacks), for all of its racing
// instructions together, then the machine is put back at the end of the
// branch.
func (j *runner) captureStacks(cs []*race.Candidate) {
	type run struct {
		tr     int
		thread record.TID
	}
	var runs []run
	pcs := map[run][]uint64{}
	var todo []*race.Candidate
	for _, c := range cs {
		if _, ok := j.stacks[c.Key()]; ok {
			continue
		}
		todo = append(todo, c)
		for _, s := range []race.Side{c.A, c.B} {
			r := run{s.Tr, s.Thread}
			if _, ok := pcs[r]; !ok {
				runs = append(runs, r)
			}
			if !slices.Contains(pcs[r], s.PC) {
				pcs[r] = append(pcs[r], s.PC)
			}
		}
	}
	if len(todo) == 0 {
		return
	}
	end := j.k.Snapshot()
	stacks := map[run]map[uint64][]report.Frame{}
	names := map[run]map[uint64]string{} // the data of the run's candidates, named after it
	for _, r := range runs {             // in the candidates' order: deterministic
		got := map[uint64][]uint64{}
		if snap, err := j.x.SnapshotAt(r.tr); err == nil {
			got = j.k.AccessStacks(snap, r.thread, pcs[r])
			names[r] = map[uint64]string{}
			for _, c := range todo {
				for _, s := range []race.Side{c.A, c.B} {
					if (run{s.Tr, s.Thread}) == r {
						names[r][s.Addr] = j.k.DataName(s.Addr)
					}
				}
			}
		}
		fr := make(map[uint64][]report.Frame, len(pcs[r]))
		for _, pc := range pcs[r] {
			st := got[pc]
			if st == nil {
				st = []uint64{pc}
			}
			fr[pc] = report.Frames(j.syms, st)
		}
		stacks[r] = fr
	}
	j.k.Restore(end)
	for _, c := range todo {
		a, b := c.A, c.B
		j.stacks[c.Key()] = [2][]report.Frame{stacks[run{a.Tr, a.Thread}][a.PC], stacks[run{b.Tr, b.Thread}][b.PC]}
		name := names[run{a.Tr, a.Thread}][a.Addr]
		if name == "" {
			name = names[run{b.Tr, b.Thread}][b.Addr]
		}
		j.names[c.Key()] = name
	}
}

// DescribePPs lists a job's PP set in words.
func DescribePPs(k *kernel.Kernel, cfg Config) []string {
	var out []string
	sync := cfg.Kernel.SyncPPs
	if sync == nil {
		// The defaults a program lacks are no PPs (kernel.New).
		for _, name := range kernel.DefaultSyncPPs {
			if _, _, ok := k.Symbols().Lookup(name); ok {
				out = append(out, name)
			}
		}
	} else {
		out = append(out, sync...)
	}
	if _, _, ok := k.Symbols().Lookup("pthread_create"); ok {
		out = append(out, "pthread calls")
	}
	if cfg.Kernel.ModelThreads {
		out = append(out, "thr_create, thr_join, thr_exit")
	}
	if cfg.Kernel.EveryAccess {
		out = append(out, "every shared access")
	}
	if cfg.PreemptEverywhere {
		out = append(out, fmt.Sprintf("every shared access (%d instructions)", len(cfg.Kernel.DataRacePCs)))
	} else {
		for _, pc := range cfg.Kernel.DataRacePCs {
			out = append(out, "data race at "+k.Symbols().Describe(pc, false).String())
		}
	}
	for _, f := range cfg.Kernel.Filters {
		if f.Within {
			out = append(out, "within "+f.Func)
		} else {
			out = append(out, "without "+f.Func)
		}
	}
	return out
}

// trace builds the report of the failing branch.
func (j *runner) trace(res *dpor.Result, out *Result) *report.Trace {
	b := res.BugBranch
	return NewTrace(j.cfg, j.syms, out.PPSet, out.Races, b.Bug, b.Transitions, b.Choices, b.Preempted, res.Executed, b.Estimate)
}

// NewTrace builds the readable report of a failing interleaving: its
// transitions (the last one failed with bug), the choices that replay it
// and which transitions began with a preemption, with the job's PP set
// and race candidates (for data-race PPs).
func NewTrace(cfg Config, syms *elfsym.Symbols, ppset []string, races []*RaceReport, bug *record.Bug,
	trs []*record.Transition, choices []record.Choice, preempted []bool, interleavings int, est estimator.Estimate) *report.Trace {
	t := &report.Trace{
		Program:       cfg.Program,
		PPSet:         ppset,
		Bug:           report.NewBug(bug, syms),
		Interleavings: interleavings,
		EstimatedSize: est.Size,
		Coverage:      est.Proportion,
		Replay:        ReplayCommand(cfg.Spec, choices),
	}
	for _, p := range preempted {
		if p {
			t.Preemptions++
		}
	}
	byPC := map[uint64]*RaceReport{}
	for _, r := range races {
		for _, pc := range []uint64{r.A.PC, r.B.PC} {
			if _, ok := byPC[pc]; !ok {
				byPC[pc] = r
			}
		}
	}
	vals := raceValues(cfg, trs, choices, byPC)
	for i, tr := range trs {
		s := report.Step{
			Index:     i,
			Thread:    int32(tr.Thread),
			Preempted: i < len(preempted) && preempted[i],
			PP:        report.PPLabel(tr.PP),
			PPKind:    tr.PP.Kind.String(),
			Stack:     report.Frames(syms, tr.Stack),
			Failure:   i == len(trs)-1,
		}
		for _, e := range tr.Sync {
			if text := report.SyncEventText(e); text != "" {
				s.Events = append(s.Events, text)
			}
		}
		if tr.PP.Kind == record.PPDataRace {
			s.Race = racePair(syms, tr.PP.PC, byPC[tr.PP.PC], trs, i, vals)
		}
		t.Steps = append(t.Steps, s)
	}
	t.Threads = report.ThreadsOf(t.Steps)
	return t
}

// racePair describes the race behind the data-race PP at pc that step i
// of the trace ends at. The candidate was seen in some interleaving, with
// that interleaving's thread numbers: the other thread named is the one
// of this trace that runs the other instruction nearest to step i (the
// first after it, else the last before it), or "another thread" if none
// does here.
func racePair(syms *elfsym.Symbols, pc uint64, r *RaceReport, trs []*record.Transition, i int, vals map[valueAt]uint64) *report.RacePair {
	here := report.Frames(syms, []uint64{pc})[0]
	if r == nil {
		return &report.RacePair{Access: here, Text: "configured data-race PP (no race candidate with this instruction was seen in this state space)"}
	}
	other, otherW, hereW := r.B, r.B.Write, r.A.Write
	if r.B.PC == pc && r.A.PC != pc {
		other, otherW, hereW = r.A, r.A.Write, r.B.Write
	}
	of := report.Frames(syms, []uint64{other.PC})[0]
	kind := "read"
	if otherW {
		kind = "write"
	}
	order := "single-order"
	if r.BothOrder {
		order = "both-order"
	}
	who := "another thread's"
	t, k, ok := otherThread(trs, i, other.PC)
	if ok {
		who = fmt.Sprintf("thread %d's", t)
	}
	p := &report.RacePair{Access: here, Other: of, OtherThread: int32(t),
		Text: fmt.Sprintf("races with %s %s at %s (%s candidate)", who, kind, of.Text, order)}
	// The values, where the trace's re-run saw them: this thread's access
	// runs at the start of its next transition.
	var said []string
	if j := nextOf(trs, i); j >= 0 {
		if v, ok := vals[valueAt{j, pc}]; ok {
			p.Value = &v
			said = append(said, fmt.Sprintf("this %s %s", accessVerb(hereW), ValueText(v)))
		}
	}
	if ok {
		if v, found := vals[valueAt{k, other.PC}]; found {
			p.OtherValue = &v
			said = append(said, fmt.Sprintf("thread %d's %s %s", t, accessVerb(otherW), ValueText(v)))
		}
	}
	if len(said) > 0 {
		p.Text += ": " + strings.Join(said, ", ")
	}
	return p
}

// accessVerb is an access and its value's verb: "read got" for a read,
// "write stored" for a write ("this read got 2", "thread 3's write
// stored 3").
func accessVerb(write bool) string {
	if write {
		return "write stored"
	}
	return "read got"
}

// ValueText prints a value a report shows: in decimal, and in hex when
// it looks like an address or a bit pattern.
func ValueText(v uint64) string {
	if v < 1<<16 {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%#x", v)
}

// valueAt is the first access by instruction pc in transition index i.
type valueAt struct {
	i  int
	pc uint64
}

// nextOf is the index of the next transition of step i's thread (-1: it
// runs no more).
func nextOf(trs []*record.Transition, i int) int {
	for j := i + 1; j < len(trs); j++ {
		if trs[j].Thread == trs[i].Thread {
			return j
		}
	}
	return -1
}

// raceValues re-runs the trace's choices on a new machine and returns the
// values of the accesses its data-race steps name: at each data-race PP,
// the access the thread makes next, and the other thread's access that
// racePair names. None (nil) when the trace has no such step or the
// re-run fails; the trace then shows no values.
func raceValues(cfg Config, trs []*record.Transition, choices []record.Choice, byPC map[uint64]*RaceReport) map[valueAt]uint64 {
	want := map[int][]uint64{}
	for i, tr := range trs {
		r := byPC[tr.PP.PC]
		if tr.PP.Kind != record.PPDataRace || r == nil {
			continue
		}
		other := r.B.PC
		if r.B.PC == tr.PP.PC && r.A.PC != tr.PP.PC {
			other = r.A.PC
		}
		if j := nextOf(trs, i); j >= 0 {
			want[j] = append(want[j], tr.PP.PC)
		}
		if _, k, ok := otherThread(trs, i, other); ok {
			want[k] = append(want[k], other)
		}
	}
	if len(want) == 0 || len(choices) < len(trs) || cfg.Image == nil {
		return nil
	}
	k, err := kernel.New(cfg.Image, cfg.Spec.KernelConfig())
	if err != nil {
		return nil
	}
	vals := map[valueAt]uint64{}
	for i := range trs {
		if done, _ := k.Ended(); done {
			break
		}
		_, got, err := k.StepValues(choices[i], want[i])
		for pc, v := range got {
			vals[valueAt{i, pc}] = v
		}
		if err != nil {
			break
		}
	}
	return vals
}

// otherThread is the thread other than step i's that runs an access at
// pc nearest to step i, the first after it, else the last before it, and
// the index of that transition.
func otherThread(trs []*record.Transition, i int, pc uint64) (record.TID, int, bool) {
	runs := func(k int) bool {
		if trs[k].Thread == trs[i].Thread {
			return false
		}
		for _, a := range trs[k].Accesses {
			if a.PC == pc {
				return true
			}
		}
		return false
	}
	for k := i + 1; k < len(trs); k++ {
		if runs(k) {
			return trs[k].Thread, k, true
		}
	}
	for k := i - 1; k >= 0; k-- {
		if runs(k) {
			return trs[k].Thread, k, true
		}
	}
	return 0, -1, false
}

// svcompWanted is the Wanted of an exploration in SV-COMP mode: a
// violation found on a trace that ran a thread inside another's atomic
// section (kernel.AtomicBrokenDetail), which SV-COMP's semantics may not
// allow, is explored past and counted in *setAside; the others go to
// wanted (every bug when nil).
func svcompWanted(wanted func(*record.Bug) bool, setAside *int) func(*record.Bug) bool {
	return func(b *record.Bug) bool {
		if b.Kind == record.BugReachError && slices.ContainsFunc(b.Details, func(d record.Detail) bool { return d.Title == kernel.AtomicBrokenDetail }) {
			*setAside++
			return false
		}
		return wanted == nil || wanted(b)
	}
}
