package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"landslide/check"
	"landslide/quicksand"
	"landslide/store"
)

type quicksandFlags struct {
	ppFlags
	output       outputFlags
	persist      persistFlags
	hb           string
	budget       time.Duration
	ilBudget     int
	cpus         int
	testingMut   bool
	maximal      bool
	control      bool
	icb          bool
	strategy     string
	seed         uint64
	depth        int
	etaFactor    float64
	etaThreshold int
	homeStretch  time.Duration
	firstBug     bool
	noMinimize   bool
	htm          htmFlags
	noFallback   bool
	noStore      bool
	walkShare    float64
	walkDepth    int
	walkSeed     uint64
}

// DefaultCPUs is quicksand's -c default: half the cores, at least one.
func DefaultCPUs() int { return max(1, min(MaxCPUs, runtime.NumCPU()/2)) }

// MaxCPUs is the largest -c: each worker holds a machine (up to
// --max-memory of guest memory and its snapshots).
const MaxCPUs = 256

func newQuicksandCmd() *cobra.Command {
	var f quicksandFlags
	cmd := &cobra.Command{
		Use:   "quicksand PROGRAM.elf [-- ARGS...]",
		Short: "Test a program the default way: Iterative Deepening over PP sets under a budget",
		Long: `Quicksand (thesis ch. 4) explores many state spaces of the program at once,
each a PP set explored with DPOR (optimal DPOR by default, which falls back
to the dpor strategy where it is not exact, as explore's does): the seeds { }, {mutex_lock},
{mutex_unlock} and {mutex_lock, mutex_unlock} (the sync PPs of --pp), and,
for every data-race candidate a job reports, a "big" job (its PPs plus a
data-race PP at the racing instruction) and a "small" one (that PP alone).
A job whose ETA does not fit twice the budget left is suspended, kept in
the store, in favour of one more likely to finish; a bug cancels every
superset of its PP set. -c workers run jobs in parallel.

Progress in the thesis's style goes to stderr every --interval, each
job's ETA smoothed and with a likely range (the scheduler decides on the
raw ETA); on a terminal, a live bar of the budget and the running jobs
too. At the end: the bugs, the PP sets verified (total verification when
the maximal state space completed), the data-race PPs no completed job
covered, CPU time and core saturation.
  exit 1  a bug
  exit 0  no bug: a total verification (the maximal state space completed
          and covered every data-race candidate), or every state space
          completed but some candidates stayed uncovered (the report says which)
  exit 3  the budget ran out first; or no bug, but a job went past a limit
          of the checker (--max-threads, --max-memory): that job ends with
          status limit, the others go on, and the run verifies nothing
  exit 2  usage or input error, or a store failure

Beyond the thesis: a pair of atomic accesses whose order nothing
synchronises (an atomic conflict: never a data race) adds jobs as a data
race does, after every data race, lock and unlock, so that lock-free code
gets PPs; and --walk-share (one eighth by default) of the run goes to
walks over the largest PP set known, a walk's bug reported as a job's
(never a verification): race-reversal walks (the default schedule, then
each thread run just before an earlier conflicting access of another)
in every other slice until they run out, and PCT walks in the others,
with seeds --walk-seed, --walk-seed+1, ....

--interleaving-budget N counts time in interleavings instead of seconds
(budget, ETAs and the home stretch, and each walk one): the run then
depends on nothing but the program, and needs -c 1. Controls: --control
(one state space with every sync PP: the thesis's -C), with --icb (-I) or
--preempt-everywhere (-0); --maximal (-M) always explores the maximal
state space. Neither runs walks.`,
		Args: atLeast(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runQuicksand(cmd, args[0], args[1:], &f) },
	}
	fl := cmd.Flags()
	f.ppFlags.register(fl)
	fl.StringVar(&f.hb, "hb", "limited", "data-race analysis: limited (Limited Happens-Before) or pure (vector clocks)")
	fl.DurationVar(&f.budget, "budget", time.Hour, "wall-clock budget (e.g. 10m, 1h)")
	fl.IntVar(&f.ilBudget, "interleaving-budget", 0, "count time in interleavings and stop after this many (deterministic; needs -c 1)")
	fl.IntVarP(&f.cpus, "cpus", "c", DefaultCPUs(), "jobs explored in parallel")
	fl.BoolVar(&f.testingMut, "testing-mutexes", false, "treat accesses inside the mutex implementation as unprotected, so that a broken mutex's races are found (default: on for mutex_test programs)")
	fl.BoolVarP(&f.maximal, "maximal", "M", false, "explore only the maximal state space, switching whenever a race adds a PP (the thesis's -M)")
	fl.BoolVarP(&f.control, "control", "C", false, "one state space with every sync PP, no data-race PPs (the thesis's -C)")
	fl.StringVar(&f.strategy, "strategy", check.DefaultStrategy, "each state space's strategy (as explore's; bounded ones need --control or --maximal, sampling ones --control): "+strategyList())
	fl.Uint64Var(&f.seed, "seed", 0, "the random and pct strategies' seed")
	fl.IntVar(&f.depth, "depth", 0, "the pct strategy's depth d (default 3)")
	fl.BoolVarP(&f.icb, "icb", "I", false, "iterative context bounding in the state spaces (with --control or --maximal)")
	fl.Float64Var(&f.etaFactor, "eta-factor", quicksand.DefaultETAFactor, "suspend a job whose ETA exceeds this many times the budget left")
	fl.IntVar(&f.etaThreshold, "eta-threshold", quicksand.DefaultETAThreshold, "never suspend a job before this many interleavings")
	fl.DurationVar(&f.homeStretch, "home-stretch", quicksand.DefaultHomeStretch, "suspend no job once less than this much budget is left (0: none; with --interleaving-budget the default is none)")
	fl.BoolVar(&f.firstBug, "first-bug", false, "end the run at the first bug instead of looking for more")
	fl.BoolVar(&f.noMinimize, "no-minimize", false, "show the bugs' traces as found: do not search for the same bugs with the fewest preemptions (landslide minimize does it later)")
	fl.Float64Var(&f.walkShare, "walk-share", quicksand.DefaultWalkShare, "share of the run given to race-reversal and PCT walks over the largest PP set known (0: none; not with --control or --maximal)")
	fl.IntVar(&f.walkDepth, "walk-depth", 3, "the PCT walks' depth d")
	fl.Uint64Var(&f.walkSeed, "walk-seed", 0, "the PCT walks' first seed (PCT slice k has seed S+k-1)")
	fl.BoolVar(&f.noFallback, "no-fallback", false, "--strategy optimal: where it is not exact on a state space (a transaction, or an execution ending with every thread asleep), keep going with a caveat instead of exploring it again with the dpor strategy")
	f.htm.register(fl)
	fl.BoolVar(&f.noStore, "no-store", false, "do not record the run in the store (it cannot be resumed)")
	f.output.register(fl)
	f.persist.register(fl)
	return cmd
}

func (f *quicksandFlags) check(cmd *cobra.Command) error {
	switch {
	case f.maximal && f.control:
		return usageErr("--maximal and --control are different modes: choose one")
	case f.icb && !f.control && !f.maximal:
		return usageErr("--icb needs --control or --maximal (Iterative Deepening does not bound preemptions: the two kinds of repeated work would compound)")
	case f.everywhere && !f.control:
		return usageErr("--preempt-everywhere needs --control (it is a single-state-space control)")
	case f.everyAcc && !f.control:
		return usageErr("--every-access needs --control (every shared access is already a PP: there are no data-race PPs to add)")
	case f.icb && cmd.Flags().Changed("strategy"):
		return usageErr("--icb and --strategy %s are two strategies: choose one", f.strategy)
	case len(f.races) > 0 || len(f.raceFuncs) > 0:
		return usageErr("quicksand finds its data-race PPs itself: drop --data-race-pp/--data-race-func (explore takes them)")
	case f.cpus < 1 || f.cpus > MaxCPUs:
		return usageErr("-c %d: must be 1 to %d (each worker holds a machine of up to --max-memory)", f.cpus, MaxCPUs)
	case f.ilBudget < 0:
		return usageErr("--interleaving-budget must be positive")
	case f.ilBudget > 0 && f.cpus != 1:
		return usageErr("--interleaving-budget needs -c 1: with more workers the order of their reports would decide the run")
	case f.ilBudget > 0 && cmd.Flags().Changed("budget"):
		return usageErr("--budget and --interleaving-budget are two clocks: give one")
	case f.budget <= 0 || f.output.interval <= 0:
		return usageErr("--budget and --interval must be positive")
	case f.etaFactor <= 0 || f.etaThreshold < 0 || f.homeStretch < 0:
		return usageErr("--eta-factor must be positive, --eta-threshold and --home-stretch at least 0")
	case f.walkShare < 0 || f.walkShare >= 1:
		return usageErr("--walk-share must be at least 0 and below 1")
	case f.walkDepth < 1 || f.walkDepth > 64:
		return usageErr("--walk-depth must be 1 to 64")
	case (f.control || f.maximal) && f.walkShare > 0 && cmd.Flags().Changed("walk-share"):
		return usageErr("--walk-share: --control and --maximal run no walks (they are the thesis's single-state-space modes)")
	}
	if info, ok := strategyInfo(f.strategy); ok {
		switch {
		case !info.Exhaustive && !f.control:
			return usageErr("--strategy %s samples interleavings and never completes a state space: it needs --control (one state space, until the budget)", f.strategy)
		case info.Bounded && !f.control && !f.maximal:
			return usageErr("--strategy %s bounds preemptions in rounds: it needs --control or --maximal (Iterative Deepening does not bound preemptions: the two kinds of repeated work would compound)", f.strategy)
		}
	}
	for _, p := range splitList(f.pps) {
		if check.IsAddrSpec(p) {
			return usageErr("--pp %s: quicksand's --pp names the sync functions of its seed jobs; it finds data-race PPs itself", p)
		}
	}
	return nil
}

func runQuicksand(cmd *cobra.Command, path string, guestArgs []string, f *quicksandFlags) error {
	if err := f.check(cmd); err != nil {
		return err
	}
	mode, err := check.ParseHB(f.hb)
	if err != nil {
		return usageErr("--hb: %v", err)
	}
	data, pps, err := f.ppFlags.program(cmd, path, guestArgs, &f.output)
	if err != nil {
		return err
	}
	spec := check.QuicksandSpec{
		Base: check.Spec{Program: path, Kernel: pps.Kernel, PreemptEverywhere: f.everywhere, HB: mode, TestingMutexes: pps.TestingMutexes},
		Options: quicksand.Options{Budget: f.budget, ETAFactor: f.etaFactor, ETAThreshold: f.etaThreshold,
			HomeStretch: f.homeStretch, Maximal: f.maximal, Control: f.control, FirstBug: f.firstBug,
			Workers: f.cpus, Deterministic: f.ilBudget > 0, WalkShare: f.walkShare, WalkDepth: f.walkDepth, WalkSeed: f.walkSeed}}
	if f.walkShare == 0 {
		spec.Options.WalkShare = -1 // the flag's 0 is none
	}
	if cmd.Flags().Changed("testing-mutexes") {
		spec.Base.TestingMutexes = f.testingMut
	}
	spec.Base.Strategy = f.strategy
	switch {
	case f.icb:
		spec.Base.Strategy = "icb"
	case !cmd.Flags().Changed("strategy") && f.htm.any():
		spec.Base.Strategy = "dpor" // settings of the dpor strategy
	}
	if f.noFallback && spec.Base.Strategy != "optimal" {
		return usageErr("--no-fallback is optimal DPOR's: not with --strategy %s", spec.Base.Strategy)
	}
	spec.Base.Fallback = spec.Base.Strategy == "optimal" && !f.noFallback
	spec.Base.Seed, spec.Base.Depth = f.seed, f.depth
	spec.Base.AbortCodes, spec.Base.STM, spec.Base.RetrySets, spec.Base.WeakAtomicity = f.htm.abortCodes, f.htm.stm, f.htm.retrySets, f.htm.weak
	if err := check.CheckSpec(spec.Base); err != nil {
		return usageErr("%v", err)
	}
	if spec.Base.RetrySets {
		// explore says it where a job meets an _xbegin (Result.Caveat);
		// a Quicksand run can be long, so it says it up front (and its
		// verdict names the jobs whose explorations met one).
		fmt.Fprintf(cmd.ErrOrStderr(), "landslide: warning: %s\n", check.RetrySetsCaveat)
	}
	if spec.Options.Deterministic {
		spec.Options.Budget = time.Duration(f.ilBudget)
	}
	// The flags' 0 is "none"; the library's 0 is its default.
	switch {
	case !cmd.Flags().Changed("home-stretch"):
		spec.Options.HomeStretch = 0 // the default of the clock: none in interleavings
	case f.homeStretch == 0:
		spec.Options.HomeStretch = -1
	}
	if f.etaThreshold == 0 {
		spec.Options.ETAThreshold = -1
	}
	rec := check.Recording{}
	if !f.noStore {
		st, err := openStore(cmd, false)
		if err != nil {
			return err
		}
		defer st.Close()
		rec = f.persist.recording(cmd, st)
	}
	q := newQSRun(cmd, path, &f.output, spec.Options.Deterministic, spec.Options.Budget, spec.Options.Workers, mode)
	q.st = rec.Store
	if spec.Base.RetrySets {
		q.warned = check.RetrySetsCaveat
	}
	ctx, stop := interruptContext(cmd)
	defer stop()
	q.noMinimize = f.noMinimize
	res, err := check.Quicksand(ctx, spec, data, rec, q.hooks())
	return q.finish(ctx, rec, res, err)
}

// resumeQuicksand continues a stored quicksand run from its last commit.
func resumeQuicksand(cmd *cobra.Command, rec check.Recording, run *store.Run, out *outputFlags, budget time.Duration) error {
	s, err := check.QuicksandState(run)
	if err != nil {
		return usageErr("run %s: %v", run.ID, err)
	}
	spec, err := check.DecodeSpec(run.Spec)
	if err != nil {
		return usageErr("run %s: %v", run.ID, err)
	}
	total := s.Opt.Budget
	if cmd.Flags().Changed("budget") {
		if s.Opt.Deterministic {
			return usageErr("run %s counts time in interleavings: --budget does not apply", run.ID)
		}
		total = budget
	} else {
		budget = 0
	}
	if s.Now >= total && run.Status != store.StatusRunning {
		// A run still marked running was killed after its last commit
		// spent the budget: resuming ends it as the budget would have.
		return usageErr("run %s has already spent its budget (%s of %s; %s): give a larger --budget to go on (see landslide show %s)",
			run.ID, check.ClockText(s.Opt.Deterministic, s.Now), check.ClockText(s.Opt.Deterministic, total), run.Message, run.ID)
	}
	if !out.quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "landslide: resuming quicksand run %s (%s, %s of %s spent)\n", run.ID, run.Message,
			check.ClockText(s.Opt.Deterministic, s.Now), check.ClockText(s.Opt.Deterministic, total))
	}
	q := newQSRun(cmd, run.Program, out, s.Opt.Deterministic, total, s.Opt.Workers, spec.HB)
	q.st = rec.Store
	liveRun(rec.Store, run)
	ctx, stop := interruptContext(cmd)
	defer stop()
	res, err := check.ResumeQuicksand(ctx, rec, run, budget, q.hooks())
	return q.finish(ctx, rec, res, err)
}

// qsRun renders one quicksand (or resumed quicksand) command: the
// progress reports and the live bar as the run goes (its hooks), and the
// final report. The runner is check.Quicksand.
type qsRun struct {
	cmd     *cobra.Command
	path    string
	out     *outputFlags
	det     bool
	budget  time.Duration
	workers int
	hb      check.HB
	// warned: the caveat said up front (retry sets'), not repeated at the end.
	warned string
	// noMinimize: show the bugs' traces as found (--no-minimize).
	noMinimize bool

	mu     sync.Mutex       // guards files and prog
	files  map[int][]string // bug reports written, per job
	wall0  time.Time
	stderr io.Writer
	status *statusOut
	prog   *qsProgress
	st     *store.Store // publishes the live progress (nil: --no-store)
}

func newQSRun(cmd *cobra.Command, path string, out *outputFlags, det bool, budget time.Duration, workers int, hb check.HB) *qsRun {
	q := &qsRun{cmd: cmd, path: path, out: out, det: det, budget: budget, workers: workers, hb: hb,
		files: map[int][]string{}, wall0: time.Now(), stderr: cmd.ErrOrStderr()}
	q.status = &statusOut{w: q.stderr} // plain: --quiet prints nothing through it
	if !out.quiet {
		q.status = newStatusOut(q.stderr)
	}
	q.prog = newQSProgress(q.status)
	return q
}

// hooks are the run's reports to the terminal.
func (q *qsRun) hooks() check.QuicksandHooks {
	h := check.QuicksandHooks{OnStep: q.observe, OnJobDone: q.jobDone}
	if q.out.quiet {
		return h
	}
	h.Interval = q.out.interval
	h.OnReport = func(s *quicksand.Sched) {
		var b strings.Builder
		q.progress(&b, s, false)
		q.status.Line(b.String())
	}
	h.OnRace = func(s *quicksand.Sched, j *quicksand.Job, id int, r quicksand.Race) {
		pp := s.Reg.PPs[id]
		kind := "a racy access"
		switch {
		case r.Atomic:
			kind = "an atomic conflict"
		case q.hb == check.Limited:
			kind = "a potentially-racy access"
		}
		q.status.Line(fmt.Sprintf("Found %s at 0x%08x in %s (job %d); %d jobs in all", kind, pp.PC, pp.Where, j.ID, len(s.Jobs)))
	}
	return h
}

// finish ends the live display, records the run's end and reports it.
func (q *qsRun) finish(ctx context.Context, rec check.Recording, res *check.QuicksandResult, err error) error {
	q.status.Done()
	if err != nil {
		if errors.Is(err, check.ErrBudgetSpent) {
			return usageErr("%v", err)
		}
		return checkErr(q.path, err)
	}
	if err := res.Finish(rec); err != nil {
		fmt.Fprintf(q.stderr, "landslide: %v\n", checkErr(q.path, err))
	}
	q.minimize(ctx, rec, res)
	return q.report(res, storeDirOf(rec))
}

// minimize replaces the traces of the bugs the run found by their
// minimizations (check.MinimizeStored), within a share of the budget
// split between them, kept in the store next to the originals. It needs
// the stored run: with --no-store the traces stay as found.
func (q *qsRun) minimize(ctx context.Context, rec check.Recording, res *check.QuicksandResult) {
	var bugs []*check.QuicksandBug
	for _, b := range res.Bugs {
		if b.Trace != nil {
			bugs = append(bugs, b)
		}
	}
	if q.noMinimize || rec.Store == nil || res.Run == nil || res.Interrupted || len(bugs) == 0 {
		return
	}
	var lim check.MinimizeLimits
	if q.det {
		lim.Interleavings = max(int(q.budget)/check.MinimizeShare/len(bugs), 1)
	} else {
		lim.Budget = check.MinimizeBudget(q.budget) / time.Duration(len(bugs))
	}
	for _, b := range bugs {
		tr, err := rec.Store.Trace(res.Run.ID, b.Job, 1)
		if err != nil {
			fmt.Fprintf(q.stderr, "landslide: warning: minimizing job %d's bug: its stored trace: %v\n", b.Job, err)
			continue
		}
		if !q.out.quiet {
			what := lim.Budget.Round(time.Millisecond).String()
			if q.det {
				what = fmt.Sprintf("%d interleavings", lim.Interleavings)
			}
			fmt.Fprintf(q.stderr, "landslide: minimizing job %d's bug trace (at most %s; --no-minimize shows it as found)\n", b.Job, what)
		}
		m, err := check.MinimizeStored(ctx, rec.Store, res.Run, tr, lim, check.Hooks{})
		if err != nil {
			fmt.Fprintf(q.stderr, "landslide: warning: minimizing job %d's bug: %v\n", b.Job, err)
			continue
		}
		// The run's words for its PP set (atomic conflicts named so).
		m.Trace.PPSet = b.Trace.PPSet
		b.Trace = m.Trace
	}
}

// progress prints the thesis's progress report (Fig. 4.6).
func (q *qsRun) progress(w io.Writer, s *quicksand.Sched, final bool) {
	var b strings.Builder
	if final {
		b.WriteString("==== FINAL REPORT ====\n")
	} else {
		b.WriteString("==== PROGRESS REPORT ====\n")
	}
	fmt.Fprintf(&b, "total time elapsed: %s\n", q.clock(s.Now))
	var pending, deferred []*quicksand.Job
	for _, j := range s.Jobs {
		switch j.Status {
		case quicksand.Pending:
			pending = append(pending, j)
			continue
		case quicksand.Suspended:
			deferred = append(deferred, j)
			continue
		}
		fmt.Fprintf(&b, "[JOB %d] %s\n   PPs: %s\n", j.ID, q.jobLine(j), s.JobPPs(j))
	}
	for i, j := range pending {
		if i == 4 && len(pending) > 5 {
			fmt.Fprintf(&b, "And %d more pending jobs should time allow.\n", len(pending)-i)
			break
		}
		fmt.Fprintf(&b, "[JOB %d] Pending...\n   PPs: %s\n", j.ID, s.JobPPs(j))
	}
	for _, j := range deferred {
		fmt.Fprintf(&b, "[JOB %d] Deferred... (%.1f%%; suspended on an ETA of %s; smoothed %s)\n   PPs: %s\n",
			j.ID, 100*j.Proportion, q.rawETA(j.ETA), q.forecast(j), s.JobPPs(j))
	}
	if w := s.Walks; w.Walks > 0 {
		pct := "no PCT slice yet"
		if w.PCT > 0 {
			pct = fmt.Sprintf("%d PCT (depth %d, seeds %d-%d)", w.PCT, s.Opt.WalkDepth, s.Opt.WalkSeed, s.Opt.WalkSeed+uint64(w.PCT-1))
		}
		rev := fmt.Sprintf("race reversal up to candidate %d", w.Reversal)
		if w.ReversalDone {
			rev = fmt.Sprintf("race reversal done, %d candidates", w.Reversal)
		}
		fmt.Fprintf(&b, "[WALKS] %d %s in %d %s: %s, %s; %s; never a verification\n   PPs: %s\n",
			w.Walks, plural(w.Walks, "walk"), w.Slices, plural(w.Slices, "slice"), pct, rev, q.walkTime(w), w.PPs)
	}
	io.WriteString(w, b.String())
}

func (q *qsRun) jobLine(j *quicksand.Job) string {
	switch j.Status {
	case quicksand.Running:
		if j.Interleavings == 0 {
			return "Setting up..."
		}
		return fmt.Sprintf("Running (%.1f%%; %s)", 100*j.Proportion, q.forecast(j))
	case quicksand.Complete:
		return fmt.Sprintf("COMPLETE (%d interleavings tested)", j.Interleavings)
	case quicksand.BugFound:
		where := ""
		q.mu.Lock()
		if fs := q.files[j.ID]; len(fs) > 0 {
			where = " " + fs[len(fs)-2]
		}
		q.mu.Unlock()
		if w := j.Walk; w != nil {
			return fmt.Sprintf("BUG FOUND by a walk:%s %s (%s)", where, j.Bug, w.Describe())
		}
		return fmt.Sprintf("BUG FOUND:%s %s (%d interleavings tested)", where, j.Bug, j.Interleavings)
	case quicksand.Cancelled:
		return fmt.Sprintf("Cancelled: %s (%d interleavings tested)", j.Note, j.Interleavings)
	case quicksand.TimedOut:
		return fmt.Sprintf("Timed out (%.1f%%; %d interleavings tested)", 100*j.Proportion, j.Interleavings)
	case quicksand.NotStarted:
		return fmt.Sprintf("Not started (%s)", j.Note)
	case quicksand.LimitReached:
		return fmt.Sprintf("LIMIT REACHED (not a bug): %s (%d interleavings tested)", j.Limit, j.Interleavings)
	}
	return j.Status.String()
}

// walkTime says how much of the run the walks took.
func (q *qsRun) walkTime(w quicksand.Walks) string {
	if q.det {
		return fmt.Sprintf("%d of the interleavings", int64(w.Share))
	}
	if w.Idle > 0 {
		return fmt.Sprintf("%s of the share, %s on idle workers", w.Share.Round(time.Millisecond), w.Idle.Round(time.Millisecond))
	}
	return w.Share.Round(time.Millisecond).String()
}

// clock prints a clock value: a duration, or interleavings.
func (q *qsRun) clock(d time.Duration) string { return check.ClockText(q.det, d) }

// report prints the end of the run and returns its exit code; the run
// is stored in the store at dir.
func (q *qsRun) report(res *check.QuicksandResult, dir string) error {
	s := res.Sched
	var bugs []*BugJSON
	for _, cb := range res.Bugs {
		b := &BugJSON{Message: cb.Message, Signature: cb.Signature}
		if kind, msg, ok := strings.Cut(cb.Message, ": "); ok { // "kind: message", as the text says it
			b.Kind, b.Message = kind, msg
		}
		if cb.Trace != nil && cb.Trace.Bug != nil {
			b = newBugJSON(cb.Trace.Bug, cb.Signature, cb.Trace, nil)
		}
		b.Job, b.PPSet = cb.Job, cb.PPSet
		if q.det {
			n := int64(cb.FoundAt)
			b.FoundAtInterleavings = &n
		} else {
			sec := cb.FoundAt.Seconds()
			b.FoundAtSeconds = &sec
		}
		if b.Trace != nil {
			name := strings.TrimSuffix(filepath.Base(q.path), filepath.Ext(q.path)) + fmt.Sprintf("-job%d", b.Job)
			files, err := writeTraces(q.out.traceDir, name, b.Trace)
			if err != nil {
				fmt.Fprintf(q.stderr, "landslide: writing the bug report: %v\n", err)
			}
			b.Files = files
			q.mu.Lock()
			q.files[b.Job] = files
			q.mu.Unlock()
		}
		bugs = append(bugs, b)
	}
	v := res.Verdict
	code := exitCode(v.Outcome)
	caveats := s.Caveats()
	for _, c := range caveats {
		if c.Text != q.warned {
			fmt.Fprintf(q.stderr, "landslide: warning: %s\n", check.CaveatLine(c))
		}
	}
	var verified, uncovered, uncoveredAtomic, atomicPPs []string
	for _, j := range s.Completed() {
		verified = append(verified, s.JobPPs(j))
	}
	for _, id := range s.Uncovered() {
		uncovered = append(uncovered, s.Reg.PPs[id].String())
	}
	for _, id := range s.UncoveredAtomic() {
		uncoveredAtomic = append(uncoveredAtomic, s.Reg.PPs[id].String())
	}
	for _, id := range s.AtomicPPs() {
		atomicPPs = append(atomicPPs, s.Reg.PPs[id].String())
	}
	if s.Opt.Control { // races add no PPs: list the candidates themselves
		for _, n := range s.UncoveredRaces() {
			uncovered = append(uncovered, fmt.Sprintf("'data race 0x%x %s / 0x%x %s' (never a PP under --control)", n.PCA, n.WhereA, n.PCB, n.WhereB))
		}
		for _, n := range s.UncoveredConflicts() {
			uncoveredAtomic = append(uncoveredAtomic, fmt.Sprintf("'atomic conflict 0x%x %s / 0x%x %s' (never a PP under --control)", n.PCA, n.WhereA, n.PCB, n.WhereB))
		}
	}
	if q.out.json {
		doc := QuicksandJSON{Program: q.path, Result: outcomeResult(v.Outcome, code), ExitCode: code, Bugs: bugs, VerifiedPPSets: verified,
			TotalVerification: s.Verified(), UncoveredRacePPs: uncovered, Clock: "wall", ElapsedSeconds: time.Duration(s.Now).Seconds(),
			CPUSeconds: res.CPU.Seconds(), Saturation: res.Saturation, AtomicConflicts: []QuicksandConflictJSON{},
			UncoveredAtomicPPs: uncoveredAtomic}
		open := map[[2]uint64]bool{}
		for _, n := range s.UncoveredConflicts() {
			open[[2]uint64{n.PCA, n.PCB}] = true
		}
		for _, n := range s.Conflicts {
			doc.AtomicConflicts = append(doc.AtomicConflicts, QuicksandConflictJSON{PCA: n.PCA, WhereA: n.WhereA, PCB: n.PCB, WhereB: n.WhereB,
				BothOrder: n.BothOrder, Job: n.Job, Covered: !open[[2]uint64{n.PCA, n.PCB}]})
		}
		if q.det {
			n := int64(s.Now)
			doc.Clock, doc.ElapsedInterleavings, doc.ElapsedSeconds = "interleavings", &n, time.Since(q.wall0).Seconds()
		}
		if doc.Bugs == nil {
			doc.Bugs = []*BugJSON{}
		}
		for _, j := range s.Jobs {
			doc.Jobs = append(doc.Jobs, QuicksandJobJSON{ID: j.ID, PPSet: s.JobPPs(j), Status: j.Status.String(),
				Origin: j.Origin, Interleavings: j.Interleavings, Proportion: finite(j.Proportion), Suspensions: j.Suspensions, Note: j.Note,
				Caveat: j.Caveat, Limit: j.Limit})
		}
		for _, c := range caveats {
			doc.Caveats = append(doc.Caveats, c.Text)
		}
		if w := s.Walks; w.Slices > 0 {
			doc.Walks = &QuicksandWalksJSON{Slices: w.Slices, Walks: w.Walks, Seconds: (w.Share + w.Idle).Seconds(),
				Depth: s.Opt.WalkDepth, Seed: s.Opt.WalkSeed, PCTSlices: w.PCT, Reversal: w.Reversal, ReversalDone: w.ReversalDone, PPSet: w.PPs}
			if q.det {
				n := int64(w.Share)
				doc.Walks.Seconds, doc.Walks.Interleavings = 0, &n
			}
		}
		if res.Run != nil {
			doc.Run = res.Run.ID
		}
		if err := writeJSON(q.cmd.OutOrStdout(), doc); err != nil {
			return err
		}
		return &exitError{code: code}
	}
	out := q.cmd.OutOrStdout()
	q.progress(out, s, true)
	switch {
	case len(bugs) > 0 || v.Outcome == check.Limit:
	case v.Outcome == check.Interrupted:
		fmt.Fprintln(out, "No bug was found before the interruption.")
	default:
		fmt.Fprintln(out, "No bugs were found -- you survived!")
	}
	for i, b := range bugs {
		fmt.Fprintf(out, "BUG (job %d, PPs %s, after %s): %s\n", b.Job, b.PPSet, q.clock(s.Jobs[b.Job-1].FoundAt), res.Bugs[i].Message)
		if len(b.Files) > 0 {
			fmt.Fprintf(out, "   reports: %s\n", strings.Join(b.Files, ", "))
		}
	}
	if len(bugs) == 0 {
		fmt.Fprintln(out, v.Message)
	}
	if len(verified) > 0 {
		fmt.Fprintf(out, "Verified PP sets (%d):\n", len(verified))
		for _, v := range verified {
			fmt.Fprintf(out, "   %s\n", v)
		}
	}
	if len(uncovered) > 0 {
		fmt.Fprintf(out, "Data-race PPs that no state space completed or found a bug with (inspect them):\n")
		for _, u := range uncovered {
			fmt.Fprintf(out, "   %s\n", u)
		}
	}
	if len(atomicPPs) > 0 {
		fmt.Fprintf(out, "Preemption points at atomic conflicts (%d; atomic accesses whose order no synchronisation fixes, not data races):\n", len(atomicPPs))
		for _, u := range atomicPPs {
			fmt.Fprintf(out, "   %s\n", u)
		}
	}
	if len(uncoveredAtomic) > 0 {
		fmt.Fprintf(out, "Atomic-conflict PPs that no state space completed or found a bug with:\n")
		for _, u := range uncoveredAtomic {
			fmt.Fprintf(out, "   %s\n", u)
		}
	}
	fmt.Fprintf(out, "Elapsed %s; CPU time %s over %d %s (core saturation %.0f%%).\n", q.clock(s.Now),
		res.CPU.Round(time.Millisecond), q.workers, plural(q.workers, "worker"), 100*res.Saturation)
	if res.Run != nil {
		if v.Outcome == check.Interrupted {
			fmt.Fprintf(out, "Interrupted: every running job committed its last interleaving; `%s` continues the run.\n", again(dir, "resume", res.Run.ID))
		}
		fmt.Fprintf(out, "Stored as run %s in %s (%s; %s for a bug).\n", res.Run.ID, dir, again(dir, "show", res.Run.ID), again(dir, "replay", res.Run.ID))
	} else if v.Outcome == check.Interrupted {
		fmt.Fprintln(out, "Interrupted (--no-store: nothing was recorded, so it cannot be resumed).")
	}
	return &exitError{code: code}
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// strategyInfo is the registered strategy named name.
func strategyInfo(name string) (check.Strategy, bool) {
	for _, s := range check.Strategies() {
		if s.Name == name {
			return s, true
		}
	}
	return check.Strategy{}, false
}
