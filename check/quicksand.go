package check

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"landslide/dpor"
	"landslide/emu/elfsym"
	"landslide/job"
	"landslide/kernel"
	"landslide/linearize"
	"landslide/quicksand"
	"landslide/race"
	"landslide/record"
	"landslide/report"
	"landslide/store"
)

// QuicksandSpec is a Quicksand run as data.
type QuicksandSpec struct {
	// Base is every job's specification but its PP set: the program, the
	// sync PPs of the seeds (Kernel.SyncPPs, nil for the default), the
	// filters, the HB mode, the strategy (icb for --icb).
	Base job.Spec
	// Options are the scheduling parameters, the workers and the clock
	// (Options.Deterministic counts time, Budget included, in
	// interleavings).
	Options quicksand.Options
}

// QuicksandHooks are what a Quicksand run reports as it goes.
type QuicksandHooks struct {
	// OnReport sees the scheduler every Interval (and at the end).
	Interval time.Duration
	OnReport func(*quicksand.Sched)
	// OnRace sees each new data-race PP as a race adds it.
	OnRace func(s *quicksand.Sched, j *quicksand.Job, pp int, r quicksand.Race)
	// OnStep sees every interleaving of every job; OnJobDone each job's
	// end (a live display). They are called from the workers.
	OnStep    func(jobID int, st job.Step)
	OnJobDone func(jobID int)
}

// QuicksandBug is one distinct bug of a run: the first job that found it.
type QuicksandBug struct {
	Job       int
	PPSet     string
	Message   string
	Signature string
	FoundAt   time.Duration // the clock: time, or interleavings when deterministic
	Trace     *report.Trace // nil when the job was explored by an earlier process
}

// QuicksandResult is how a Quicksand run ended.
type QuicksandResult struct {
	Sched *quicksand.Sched
	// Bugs, deduplicated by signature, in job order.
	Bugs    []*QuicksandBug
	Verdict Verdict
	Run     *store.Run // nil without a store
	// CPU and wall time of the whole run (the runs it resumes included),
	// and the share of the workers' capacity the CPU time used.
	CPU, Wall     time.Duration
	Saturation    float64
	Workers       int
	Deterministic bool
	Interrupted   bool
}

// Quicksand runs Iterative Deepening over PP sets (thesis ch. 4) until
// every job has ended, the budget is spent, or ctx is canceled (then
// every running job commits and stops, and the run is resumable). With
// rec.Store it is a new stored run, each job committed as it goes.
func Quicksand(ctx context.Context, spec QuicksandSpec, image []byte, rec Recording, hooks QuicksandHooks) (*QuicksandResult, error) {
	base := spec.Base
	if base.Kernel.SyncPPs == nil {
		// The default sync functions the program has (a POSIX program
		// has none: its pthread calls are PPs anyway).
		base.Kernel.SyncPPs = []string{}
		img, err := elfsym.Parse(image)
		if err != nil {
			return nil, err
		}
		for _, fn := range DefaultSyncPPs() {
			if _, _, ok := img.Symbols.Lookup(fn); ok {
				base.Kernel.SyncPPs = append(base.Kernel.SyncPPs, fn)
			}
		}
	}
	// A new run is the resumption of its seeded state, stored first.
	s := quicksand.New(spec.Options, base.Kernel.SyncPPs)
	state, err := s.Encode()
	if err != nil {
		return nil, err
	}
	q := &qsRunner{base: job.Config{Spec: base, Image: image}, rec: rec, hooks: hooks,
		cfg: quicksand.Config{Options: s.Opt, Resume: state}}
	if rec.Store != nil {
		run, err := rec.newRun("quicksand", base, image)
		if err != nil {
			return nil, err
		}
		run.State = state
		if err := rec.Store.Commit(&store.Commit{Run: run}); err != nil {
			return nil, rec.storeErr(err)
		}
		q.run = run
	}
	return q.execute(ctx)
}

// ErrBudgetSpent: a resumed Quicksand run has no budget left.
var ErrBudgetSpent = fmt.Errorf("the run has already spent its budget")

// ResumeQuicksand continues a stored quicksand run from its last commit;
// budget, when not zero, replaces the run's (the time already spent
// counts against it).
func ResumeQuicksand(ctx context.Context, rec Recording, run *store.Run, budget time.Duration, hooks QuicksandHooks) (*QuicksandResult, error) {
	spec, img, err := rec.stored(run)
	if err != nil {
		return nil, err
	}
	s, err := quicksand.Decode(run.State)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	cfg := quicksand.Config{Options: s.Opt, Resume: run.State}
	if budget != 0 {
		cfg.Budget = budget
	}
	if s.Now >= cfg.Budget && run.Status != store.StatusRunning {
		// A run still marked running was killed after its last commit
		// spent the budget: it is resumed, and ends as the budget would
		// have ended it.
		return nil, fmt.Errorf("run %s: %w (%s of %s; %s): give a larger budget to go on", run.ID, ErrBudgetSpent,
			ClockText(s.Opt.Deterministic, s.Now), ClockText(s.Opt.Deterministic, cfg.Budget), run.Message)
	}
	q := &qsRunner{base: job.Config{Spec: spec, Image: img}, rec: rec, hooks: hooks, cfg: cfg, run: run}
	return q.execute(ctx)
}

// QuicksandState decodes a stored quicksand run's scheduler.
func QuicksandState(run *store.Run) (*quicksand.Sched, error) { return quicksand.Decode(run.State) }

// ClockText prints a Quicksand clock value: a duration, or interleavings.
func ClockText(det bool, d time.Duration) string {
	if det {
		return fmt.Sprintf("%d interleavings", int64(d))
	}
	return d.Round(time.Second).String()
}

// qsRunner runs the jobs of one Quicksand run: each job is explored by
// package job; with a store a suspended job stops and later resumes from
// its last commit, without one it waits in memory (parked).
type qsRunner struct {
	base  job.Config
	rec   Recording
	hooks QuicksandHooks
	cfg   quicksand.Config
	run   *store.Run

	syms *elfsym.Symbols
	mu   sync.Mutex // guards bugs, parked and the run record
	bugs map[int]*QuicksandBug
	// parked holds the suspended jobs without a store: their
	// explorations wait in memory for the scheduler to resume them.
	parked map[int]*parkedJob
	cpu0   time.Duration
	// sigs are the signatures of the bugs of the run so far, this
	// process's and, resumed, the stored ones: a walk's bug with one of
	// them is no job of its own.
	sigs map[string]bool
}

func (q *qsRunner) execute(ctx context.Context) (*QuicksandResult, error) {
	img, err := elfsym.Parse(q.base.Image)
	if err != nil {
		return nil, err
	}
	q.syms, q.bugs, q.parked, q.sigs = img.Symbols, map[int]*QuicksandBug{}, map[int]*parkedJob{}, map[string]bool{}
	if q.cfg.Resume != nil {
		// The bugs the resumed state holds are known; a walk's bug stored
		// after that state's commit is not: the resumed run finds it
		// again, at the same walk (storeWalkBug).
		if s, err := quicksand.Decode(q.cfg.Resume); err == nil {
			for id, sig := range q.storedSignatures() {
				if id >= 1 && id <= len(s.Jobs) && s.Jobs[id-1].Status == quicksand.BugFound {
					q.sigs[sig] = true
				}
			}
		}
	}
	q.cpu0 = processCPU()
	c := q.cfg
	c.Runner = q.runJob
	c.Walker = q.walk
	c.CPU = func() time.Duration { return processCPU() - q.cpu0 }
	c.Interval, c.OnReport, c.OnRace = q.hooks.Interval, q.hooks.OnReport, q.hooks.OnRace
	res, err := quicksand.Run(ctx, c)
	q.release()
	if err != nil {
		return nil, err
	}
	return q.result(res), nil
}

// result deduplicates the bugs, derives the verdict and records the end.
func (q *qsRunner) result(res *quicksand.Result) *QuicksandResult {
	s := res.Sched
	out := &QuicksandResult{Sched: s, Run: q.run, CPU: s.CPU, Wall: s.Wall, Workers: q.cfg.Workers,
		Deterministic: q.cfg.Deterministic, Interrupted: res.Interrupted}
	if s.Wall > 0 {
		out.Saturation = s.CPU.Seconds() / (s.Wall.Seconds() * float64(q.cfg.Workers))
	}
	seen := map[string]bool{}
	var stored map[int]string // job → signature, of the bugs earlier processes found
	for _, j := range s.Bugs() {
		b := q.bugs[j.ID]
		if b == nil {
			// Found by an earlier process of this run: its signature is in
			// the store (the message stands in only if that record is
			// unreadable, which verify-store reports).
			if stored == nil {
				stored = q.storedSignatures()
			}
			b = &QuicksandBug{Job: j.ID, Message: j.Bug, Signature: j.Bug}
			if sig, ok := stored[j.ID]; ok {
				b.Signature = sig
			}
		}
		b.PPSet = s.JobPPs(j)
		b.FoundAt = time.Duration(j.FoundAt)
		if seen[b.Signature] {
			continue
		}
		seen[b.Signature] = true
		out.Bugs = append(out.Bugs, b)
	}
	out.Verdict = quicksandVerdict(s, len(out.Bugs), res.Interrupted)
	return out
}

// storedSignatures maps the jobs of the run that have a stored bug to its
// signature.
func (q *qsRunner) storedSignatures() map[int]string {
	out := map[int]string{}
	if q.rec.Store == nil || q.run == nil {
		return out
	}
	bugs, err := q.rec.Store.Bugs(q.run.ID)
	if err != nil {
		return out
	}
	for _, b := range bugs {
		if _, ok := out[b.Job]; !ok {
			out[b.Job] = b.Signature
		}
	}
	return out
}

// Finish records the run's end, the verdict and the final job table
// (a no-op without a store).
func (r *QuicksandResult) Finish(rec Recording) error {
	if r.Run == nil {
		return nil
	}
	state, err := r.Sched.Encode()
	if err != nil {
		return err
	}
	r.Run.State = state
	r.Run.Status, r.Run.Message = r.Verdict.Status, "quicksand: "+r.Verdict.Message
	return rec.storeErr(rec.Store.Commit(&store.Commit{Run: r.Run, Flush: true}))
}

// parkedJob is an exploration suspended in memory (no store): its
// goroutine waits in its Control callback.
type parkedJob struct {
	resume chan bool // true: go on; false: stop (the run is over)
	done   chan jobEnd
}

type jobEnd struct {
	out *quicksand.Outcome
	err error
}

// runJob is the quicksand.Runner.
func (q *qsRunner) runJob(ctx context.Context, spec quicksand.JobSpec, ctl quicksand.Control) (*quicksand.Outcome, error) {
	if q.rec.Store != nil {
		return q.explore(ctx, spec, ctl, nil)
	}
	q.mu.Lock()
	p := q.parked[spec.ID]
	q.mu.Unlock()
	if p != nil {
		p.resume <- true
		e := <-p.done
		return e.out, e.err
	}
	p = &parkedJob{resume: make(chan bool), done: make(chan jobEnd, 1)}
	q.mu.Lock()
	q.parked[spec.ID] = p
	q.mu.Unlock()
	go func() {
		out, err := q.explore(ctx, spec, ctl, p)
		q.mu.Lock()
		delete(q.parked, spec.ID)
		q.mu.Unlock()
		p.done <- jobEnd{out, err}
	}()
	e := <-p.done
	return e.out, e.err
}

// release ends the explorations still parked when the run is over.
func (q *qsRunner) release() {
	q.mu.Lock()
	ps := make([]*parkedJob, 0, len(q.parked))
	for _, p := range q.parked {
		ps = append(ps, p)
	}
	q.mu.Unlock()
	for _, p := range ps {
		p.resume <- false
		<-p.done
	}
}

// explore runs one job; p, when set, parks it on Suspend.
func (q *qsRunner) explore(ctx context.Context, spec quicksand.JobSpec, ctl quicksand.Control, p *parkedJob) (*quicksand.Outcome, error) {
	cfg := q.base
	cfg.Kernel.SyncPPs = spec.SyncPPs
	cfg.Kernel.SharedStack = spec.SharedStack
	if !cfg.PreemptEverywhere {
		cfg.Kernel.DataRacePCs = spec.DataRacePCs
	}
	cfg.Control = func(st job.Step) bool {
		races := append(q.races(st.Races, false), q.races(st.Conflicts, true)...)
		d := ctl.Step(quicksand.Step{Interleavings: st.Interleavings, Estimate: st.Estimate, Races: races})
		if q.hooks.OnStep != nil {
			q.hooks.OnStep(spec.ID, st)
		}
		if d == quicksand.Suspend && p != nil {
			p.done <- jobEnd{out: &quicksand.Outcome{}} // the worker is free
			return <-p.resume
		}
		return d == quicksand.Continue
	}
	if q.rec.Store != nil {
		js := cfg.Spec
		runCopy := *q.run
		p := q.rec.persist(&runCopy, spec.ID)
		p.Resume, p.Spec = spec.Resume, &js
		p.Attach = func(c *store.Commit, final *job.Result) {
			var out *quicksand.Outcome
			if final != nil {
				out = outcome(final)
			}
			state := ctl.State(out)
			q.mu.Lock()
			defer q.mu.Unlock()
			q.run.State = state
			q.run.Status, q.run.Message = store.StatusRunning, "quicksand running"
			r := *q.run
			c.Run = &r
		}
		cfg.Persist = p
	}
	res, err := job.Run(ctx, cfg)
	if q.hooks.OnJobDone != nil {
		q.hooks.OnJobDone(spec.ID)
	}
	if err != nil {
		return nil, err
	}
	out := outcome(res)
	if res.Trace != nil {
		relabel(res.Trace, spec.AtomicPCs)
		res.Trace.Races = ReportRaces(res.Syms, res.Races) // the failing job's candidates
		q.mu.Lock()
		b := &QuicksandBug{Job: spec.ID, Message: out.Bug, Trace: res.Trace, PPSet: strings.Join(res.PPSet, ", ")}
		if res.Bug != nil {
			_, b.Signature = job.Signature(q.syms, res.Bug)
		}
		q.bugs[spec.ID], q.sigs[b.Signature] = b, true
		q.mu.Unlock()
	}
	return out, nil
}

// walk is the quicksand.Walker: one slice of walks, as `explore
// --strategy pct --seed S --depth d` (or `--strategy reversal --seed S`)
// over the slice's PP set, its bug reported (and stored) as a job's.
func (q *qsRunner) walk(ctx context.Context, spec quicksand.WalkSpec, ctl quicksand.WalkControl) (int, error) {
	cfg := q.base
	cfg.Kernel.SyncPPs = spec.SyncPPs
	cfg.Kernel.SharedStack = spec.SharedStack
	cfg.Kernel.DataRacePCs = spec.DataRacePCs
	cfg.PreemptEverywhere = false
	cfg.Spec.Spec = WalkStrategy(cfg.Spec.Spec, spec.Kind, spec.Seed, spec.Depth)
	cfg.Budget = 0
	cfg.Control = func(st job.Step) bool { return ctl.Walk(st.Interleavings) }
	res, err := job.Run(ctx, cfg)
	if err != nil {
		return 0, err
	}
	if res.Stopped == dpor.StopRestricted && ctl.Exhausted != nil {
		ctl.Exhausted() // the reversal walks ran out
	}
	if res.Bug == nil || res.Trace == nil {
		return res.Executed, nil
	}
	relabel(res.Trace, spec.AtomicPCs)
	_, sig := job.Signature(q.syms, res.Bug)
	q.mu.Lock()
	known := q.sigs[sig]
	q.mu.Unlock()
	if known {
		return res.Executed, nil // found before (by a walk or a job): not a job of its own again
	}
	msg := outcome(res).Bug
	id, _ := ctl.Bug(res.Executed, msg) // its state is not stored: storeWalkBug
	b := &QuicksandBug{Job: id, Message: msg, Trace: res.Trace, PPSet: strings.Join(res.PPSet, ", "), Signature: sig}
	q.mu.Lock()
	q.bugs[id], q.sigs[sig] = b, true
	q.mu.Unlock()
	if q.rec.Store != nil {
		if err := q.storeWalkBug(id, cfg.Spec, res, b.Signature); err != nil {
			return res.Executed, err
		}
	}
	if q.hooks.OnJobDone != nil {
		q.hooks.OnJobDone(id) // the walk's job has ended (and committed)
	}
	return res.Executed, nil
}

// WalkStrategy is s with one of Quicksand's walk kinds as its strategy:
// dpor's "pct" with the slice's seed and depth, or "reversal" with its
// first candidate as the seed, and none of the other strategies'
// parameters (the transactional-memory settings stay).
func WalkStrategy(s dpor.Spec, kind string, seed uint64, depth int) dpor.Spec {
	if kind == quicksand.WalkReversal {
		depth = 0
	} else {
		kind = quicksand.WalkPCT
	}
	w := dpor.Spec{Strategy: kind, Seed: seed, Depth: depth, NoDepthHeuristic: s.NoDepthHeuristic,
		AbortCodes: s.AbortCodes, STM: s.STM, WeakAtomicity: s.WeakAtomicity}
	return w
}

// storeWalkBug commits a walk's bug as job id of the run: the job (its
// spec, the walk's PP set), the failing interleaving and the bug, so that
// show, bugs and replay find it as they find a job's. The run's stored
// scheduler state stays that of the last job commit: the walk ran inside
// a job's report, and that job's progress since its last commit is not
// stored, so a state with the walk's job and the clock of now would not
// match it after a crash (the resumed job would run those interleavings
// again and count them twice). After a crash there, the resumed run
// runs the slice again and finds the bug at the same walk; the run's
// next job commit stores the state with it.
func (q *qsRunner) storeWalkBug(id int, spec job.Spec, res *job.Result, sig string) error {
	js, err := job.EncodeSpec(spec)
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	runID := q.run.ID
	br := res.BugBranch
	tr := &store.TraceRecord{Run: runID, Job: id, ID: 1, Kind: "bug", Choices: slices.Clone(br.Choices),
		Transitions: slices.Clone(br.Transitions), Preempted: slices.Clone(br.Preempted)}
	for i := range br.Transitions {
		tr.Hashes = append(tr.Hashes, record.Hash(br.Transitions[i:i+1]))
	}
	bug := &store.BugRecord{Run: runID, Job: id, Trace: tr.ID, Kind: br.Bug.Kind, Message: br.Bug.Message,
		Thread: br.Bug.Thread, PC: br.Bug.PC, Signature: sig}
	bug.Funcs, _ = job.Signature(q.syms, br.Bug)
	jb := &store.Job{Run: runID, ID: id, PPSet: res.PPSet, Status: store.StatusBug, Interleavings: res.Interleavings,
		Executed: res.Executed, Transitions: res.Transitions, Elapsed: int64(res.Elapsed), Commits: 1, Spec: js,
		Semantics: kernel.Semantics, Lineup: linearize.Revision}
	q.run.Status, q.run.Message = store.StatusRunning, "quicksand running"
	r := *q.run
	c := &store.Commit{Run: &r, Job: jb, Traces: []*store.TraceRecord{tr}, Bugs: []*store.BugRecord{bug}, Flush: true}
	return q.rec.storeErr(q.rec.Store.Commit(c))
}

// relabel names the PPs at atomic conflicts (pcs) as such in a bug's
// report, which the job describes as data-race PPs (a PP at an
// instruction is one kind to the machine): its PP set and the label of
// the transitions they ended.
func relabel(t *report.Trace, pcs []uint64) {
	if len(pcs) == 0 {
		return
	}
	for i, s := range t.PPSet {
		for _, pc := range pcs {
			if p := fmt.Sprintf("data race at 0x%08x", pc); strings.HasPrefix(s, p) {
				t.PPSet[i] = "atomic conflict at" + strings.TrimPrefix(s, "data race at")
			}
		}
	}
	for i := range t.Steps {
		st := &t.Steps[i]
		if st.PPKind == record.PPDataRace.String() && len(st.Stack) > 0 && slices.Contains(pcs, st.Stack[0].PC) {
			st.PP = "atomic conflict"
		}
	}
}

func outcome(res *job.Result) *quicksand.Outcome {
	// Complete only if verified: an execution that ran out of
	// instructions, or a restricted strategy, leaves interleavings out.
	out := &quicksand.Outcome{Complete: res.Verified, SharedStack: res.SharedStack,
		Interrupted: res.Stopped == StopCanceled, Caveat: res.Caveat}
	if res.Bug != nil {
		out.Bug = fmt.Sprintf("%s: %s", res.Bug.Kind, res.Bug.Message)
	}
	if res.Limit != nil {
		out.Limit = res.Limit.Message
	}
	return out
}

// races converts a job's new or reclassified candidates (atomic: its
// atomic conflicts), the access that ran first as A, leaving out those no
// PP could ever reach.
func (q *qsRunner) races(cs []*race.Candidate, atomic bool) []quicksand.Race {
	var out []quicksand.Race
	for _, c := range cs {
		a, b := c.A, c.B
		if b.Tr < a.Tr {
			a, b = b, a
		}
		if q.sealed(a.PC) || q.sealed(b.PC) {
			continue // inside a function the PP filters exclude: a PP there never fires
		}
		out = append(out, quicksand.Race{PCA: a.PC, PCB: b.PC, WhereA: q.where(a.PC), WhereB: q.where(b.PC),
			BothOrder: c.BothOrder, FirstInterleaving: c.FirstInterleaving, Realloc: c.Realloc,
			// Under weak atomicity a transaction's body has PPs, so
			// both halves of a transactional/non-transactional race
			// can be preempted (thesis §6.2.4, -W).
			BothHalves: q.base.Spec.WeakAtomicity && a.Txn != b.Txn, Atomic: atomic})
	}
	return out
}

// where names a data-race PP's instruction: "thread1 (fig1.c:24)".
func (q *qsRunner) where(pc uint64) string {
	fr := q.syms.Describe(pc, false)
	name := fr.Func
	if name == "" {
		name = "<unknown>"
	}
	if fr.File != "" {
		return fmt.Sprintf("%s (%s:%d)", name, filepath.Base(fr.File), fr.Line)
	}
	return name
}

// sealed reports whether a data-race PP at pc could never fire: its own
// function is excluded by a without filter (it is on the stack whenever
// the instruction runs). A within filter cannot be decided from the PC
// alone.
func (q *qsRunner) sealed(pc uint64) bool {
	fn, _, ok := q.syms.FuncAt(pc)
	if !ok {
		return false
	}
	for _, f := range q.base.Kernel.Filters {
		if !f.Within && f.Func == fn {
			return true
		}
	}
	return false
}

// processCPU is this process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
