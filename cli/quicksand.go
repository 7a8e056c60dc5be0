package cli

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"landslide/dpor"
	"landslide/emu/elfsym"
	"landslide/job"
	"landslide/kernel"
	"landslide/quicksand"
	"landslide/race"
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
	maximal      bool
	control      bool
	icb          bool
	etaFactor    float64
	etaThreshold int
	homeStretch  time.Duration
	firstBug     bool
	noStore      bool
}

// DefaultCPUs is quicksand's -c default: half the cores, at least one.
func DefaultCPUs() int { return max(1, runtime.NumCPU()/2) }

func newQuicksandCmd() *cobra.Command {
	var f quicksandFlags
	cmd := &cobra.Command{
		Use:   "quicksand PROGRAM.elf [-- ARGS...]",
		Short: "Test a program the default way: Iterative Deepening over PP sets under a budget",
		Long: `Quicksand (thesis ch. 4) explores many state spaces of the program at once,
each a PP set explored with DPOR: the seeds { }, {mutex_lock},
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
  exit 0  total verification: the maximal state space completed, no bug
  exit 3  the budget ran out first
  exit 2  usage or input error, or a store failure

--interleaving-budget N counts time in interleavings instead of seconds
(budget, ETAs and the home stretch): the run then depends on nothing but
the program, and needs -c 1. Controls: --control (one state space with
every sync PP: the thesis's -C), with --icb (-I) or --preempt-everywhere
(-0); --maximal (-M) always explores the maximal state space.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runQuicksand(cmd, args[0], args[1:], &f) },
	}
	fl := cmd.Flags()
	f.ppFlags.register(fl)
	fl.StringVar(&f.hb, "hb", "limited", "data-race analysis: limited (Limited Happens-Before) or pure (vector clocks)")
	fl.DurationVar(&f.budget, "budget", time.Hour, "wall-clock budget (e.g. 10m, 1h)")
	fl.IntVar(&f.ilBudget, "interleaving-budget", 0, "count time in interleavings and stop after this many (deterministic; needs -c 1)")
	fl.IntVarP(&f.cpus, "cpus", "c", DefaultCPUs(), "jobs explored in parallel")
	fl.BoolVarP(&f.maximal, "maximal", "M", false, "explore only the maximal state space, switching whenever a race adds a PP (the thesis's -M)")
	fl.BoolVarP(&f.control, "control", "C", false, "one state space with every sync PP, no data-race PPs (the thesis's -C)")
	fl.BoolVarP(&f.icb, "icb", "I", false, "iterative context bounding in the state spaces (with --control or --maximal)")
	fl.Float64Var(&f.etaFactor, "eta-factor", quicksand.DefaultETAFactor, "suspend a job whose ETA exceeds this many times the budget left")
	fl.IntVar(&f.etaThreshold, "eta-threshold", quicksand.DefaultETAThreshold, "never suspend a job before this many interleavings")
	fl.DurationVar(&f.homeStretch, "home-stretch", quicksand.DefaultHomeStretch, "suspend no job once less than this much budget is left (in interleavings with --interleaving-budget: 0)")
	fl.BoolVar(&f.firstBug, "first-bug", false, "end the run at the first bug instead of looking for more")
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
	case len(f.races) > 0 || len(f.raceFuncs) > 0:
		return usageErr("quicksand finds its data-race PPs itself: drop --data-race-pp/--data-race-func (explore takes them)")
	case f.cpus < 1:
		return usageErr("-c must be at least 1")
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
	}
	for _, p := range splitList(f.pps) {
		if isAddrSpec(p) {
			return usageErr("--pp %s: quicksand's --pp names the sync functions of its seed jobs; it finds data-race PPs itself", p)
		}
	}
	return nil
}

func runQuicksand(cmd *cobra.Command, path string, guestArgs []string, f *quicksandFlags) error {
	if err := f.check(cmd); err != nil {
		return err
	}
	mode, err := race.ParseMode(f.hb)
	if err != nil {
		return usageErr("--hb: %v", err)
	}
	data, kcfg, err := f.ppFlags.program(cmd, path, guestArgs, &f.output)
	if err != nil {
		return err
	}
	sync := kcfg.SyncPPs
	if sync == nil {
		sync = append([]string(nil), kernel.DefaultSyncPPs...)
	}
	testing := strings.HasPrefix(filepath.Base(path), "mutex_test")
	base := job.Config{Program: path, Image: data, Kernel: kcfg, PreemptEverywhere: f.everywhere, HB: mode, TestingMutexes: testing}
	if f.icb {
		base.DPOR.ICB, base.DPOR.MaxBound = true, dpor.UnlimitedBound
	}
	base.Kernel.SyncPPs = sync
	opt := quicksand.Options{Budget: f.budget, ETAFactor: f.etaFactor, ETAThreshold: f.etaThreshold,
		HomeStretch: f.homeStretch, Maximal: f.maximal, Control: f.control, FirstBug: f.firstBug}
	det := f.ilBudget > 0
	if det {
		opt.Budget = time.Duration(f.ilBudget)
		if !cmd.Flags().Changed("home-stretch") {
			opt.HomeStretch = 0
		}
	}
	if f.etaThreshold == 0 {
		opt.ETAThreshold = -1 // none (0 would be the default)
	}
	// A new run is the resumption of its seeded state, stored first.
	s := quicksand.New(opt, sync)
	s.Opt.Workers, s.Opt.Deterministic = f.cpus, det
	state, err := s.Encode()
	if err != nil {
		return err
	}
	q := &qsRun{cmd: cmd, path: path, base: base, out: &f.output, persist: &f.persist,
		cfg: quicksand.Config{Options: s.Opt, Workers: f.cpus, Deterministic: det, Resume: state}}
	if !f.noStore {
		st, run, err := newStoredRun(cmd, "quicksand", path, data, &base)
		if err != nil {
			return err
		}
		defer st.Close()
		run.State = state
		if err := st.Commit(&store.Commit{Run: run}); err != nil {
			return storeErr(st.Dir(), err)
		}
		q.st, q.run = st, run
	}
	return q.execute()
}

// resumeQuicksand continues a stored quicksand run from its last commit.
func resumeQuicksand(cmd *cobra.Command, st *store.Store, run *store.Run, out *outputFlags, pf *persistFlags, budget time.Duration) error {
	spec, err := job.DecodeSpec(run.Spec)
	if err != nil {
		return usageErr("run %s: %v", run.ID, err)
	}
	s, err := quicksand.Decode(run.State)
	if err != nil {
		return usageErr("run %s: %v", run.ID, err)
	}
	img, err := st.Binary(run.Binary)
	if err != nil {
		return storeErr(st.Dir(), err)
	}
	cfg := quicksand.Config{Options: s.Opt, Workers: s.Opt.Workers, Deterministic: s.Opt.Deterministic, Resume: run.State}
	if cmd.Flags().Changed("budget") {
		if cfg.Deterministic {
			return usageErr("run %s counts time in interleavings: --budget does not apply", run.ID)
		}
		cfg.Budget = budget
	}
	if s.Now >= cfg.Budget {
		return usageErr("run %s has already spent its budget (%s of %s; %s): give a larger --budget to go on (see landslide show %s)",
			run.ID, clockText(s.Opt.Deterministic, s.Now), clockText(s.Opt.Deterministic, cfg.Budget), run.Message, run.ID)
	}
	if !out.quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "landslide: resuming quicksand run %s (%s, %s of %s spent)\n", run.ID, run.Message,
			clockText(s.Opt.Deterministic, s.Now), clockText(s.Opt.Deterministic, cfg.Budget))
	}
	q := &qsRun{cmd: cmd, path: run.Program, base: spec.Config(img), out: out, persist: pf, cfg: cfg, st: st, run: run}
	return q.execute()
}

func clockText(det bool, d time.Duration) string {
	if det {
		return fmt.Sprintf("%d interleavings", int64(d))
	}
	return d.Round(time.Second).String()
}

// qsRun is one quicksand (or resumed quicksand) command.
type qsRun struct {
	cmd     *cobra.Command
	path    string
	base    job.Config
	out     *outputFlags
	persist *persistFlags
	cfg     quicksand.Config
	st      *store.Store
	run     *store.Run

	syms *elfsym.Symbols
	mu   sync.Mutex // guards bugs, parked and the run record
	bugs map[int]*QuicksandBug
	// parked holds the suspended jobs without a store (--no-store): their
	// explorations wait in memory for the scheduler to resume them.
	parked map[int]*parkedJob
	cpu0   time.Duration
	wall0  time.Time
	stderr io.Writer
	prog   *qsProgress // guarded by mu
}

func (q *qsRun) execute() error {
	img, err := elfsym.Parse(q.base.Image)
	if err != nil {
		return usageErr("%v", err)
	}
	q.syms, q.bugs, q.parked, q.stderr = img.Symbols, map[int]*QuicksandBug{}, map[int]*parkedJob{}, q.cmd.ErrOrStderr()
	q.cpu0, q.wall0 = processCPU(), time.Now()
	c := q.cfg
	c.Runner = q.runJob
	c.CPU = func() time.Duration { return processCPU() - q.cpu0 }
	status := &statusOut{w: q.stderr} // plain: --quiet prints nothing through it
	if !q.out.quiet {
		status = newStatusOut(q.stderr)
	}
	q.prog = newQSProgress(status)
	defer status.Done()
	if !q.out.quiet {
		c.Interval = q.out.interval
		c.OnReport = func(s *quicksand.Sched) {
			var b strings.Builder
			q.progress(&b, s, false)
			status.Line(b.String())
		}
		c.OnRace = func(s *quicksand.Sched, j *quicksand.Job, id int, r quicksand.Race) {
			pp := s.Reg.PPs[id]
			kind := "a racy"
			if q.base.HB == race.Limited {
				kind = "a potentially-racy"
			}
			status.Line(fmt.Sprintf("Found %s access at 0x%08x in %s (job %d); %d jobs in all", kind, pp.PC, pp.Where, j.ID, len(s.Jobs)))
		}
	}
	res, err := quicksand.Run(c)
	q.release()
	status.Done()
	if err != nil {
		return jobErr(q.path, err)
	}
	return q.report(res)
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

// runJob is the quicksand.Runner: one job, explored by package job. With
// a store a suspended job stops and later resumes from its last commit;
// without one it waits in memory (parked).
func (q *qsRun) runJob(spec quicksand.JobSpec, ctl quicksand.Control) (*quicksand.Outcome, error) {
	if q.st != nil {
		return q.explore(spec, ctl, nil)
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
		out, err := q.explore(spec, ctl, p)
		q.mu.Lock()
		delete(q.parked, spec.ID)
		q.mu.Unlock()
		p.done <- jobEnd{out, err}
	}()
	e := <-p.done
	return e.out, e.err
}

// release ends the explorations still parked when the run is over.
func (q *qsRun) release() {
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
func (q *qsRun) explore(spec quicksand.JobSpec, ctl quicksand.Control, p *parkedJob) (*quicksand.Outcome, error) {
	cfg := q.base
	cfg.Kernel.SyncPPs = spec.SyncPPs
	cfg.Kernel.SharedStack = spec.SharedStack
	if !cfg.PreemptEverywhere {
		cfg.Kernel.DataRacePCs = spec.DataRacePCs
	}
	cfg.Control = func(st job.Step) bool {
		d := ctl.Step(quicksand.Step{Interleavings: st.Interleavings, Estimate: st.Estimate, Races: q.races(st.Races)})
		q.observe(spec.ID, st)
		if d == quicksand.Suspend && p != nil {
			p.done <- jobEnd{out: &quicksand.Outcome{}} // the worker is free
			return <-p.resume
		}
		return d == quicksand.Continue
	}
	if q.st != nil {
		js := cfg.Spec()
		runCopy := *q.run
		p := q.persist.persist(q.st, &runCopy)
		p.Job, p.Resume, p.Spec = spec.ID, spec.Resume, &js
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
	res, err := job.Run(cfg)
	q.jobDone(spec.ID)
	if err != nil {
		return nil, err
	}
	out := outcome(res)
	if res.Trace != nil {
		res.Trace.Races = reportRaces(res.Races) // the failing job's candidates
		q.mu.Lock()
		b := &QuicksandBug{Job: spec.ID, Message: out.Bug, Trace: res.Trace, PPSet: strings.Join(res.PPSet, ", ")}
		if res.Bug != nil {
			_, b.Signature = job.Signature(q.syms, res.Bug)
		}
		q.bugs[spec.ID] = b
		q.mu.Unlock()
	}
	return out, nil
}

func outcome(res *job.Result) *quicksand.Outcome {
	out := &quicksand.Outcome{Complete: res.Complete && res.Bug == nil, SharedStack: res.SharedStack}
	if res.Bug != nil {
		out.Bug = fmt.Sprintf("%s: %s", res.Bug.Kind, res.Bug.Message)
	}
	return out
}

// races converts a job's new or reclassified candidates, the access that
// ran first as A.
func (q *qsRun) races(cs []*race.Candidate) []quicksand.Race {
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
			BothOrder: c.BothOrder, FirstInterleaving: c.FirstInterleaving, Realloc: c.Realloc})
	}
	return out
}

// where names a data-race PP's instruction: "thread1 (fig1.c:24)".
func (q *qsRun) where(pc uint64) string {
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
// the instruction runs), or its function is "within"-excluded... only the
// first can be decided from the PC alone.
func (q *qsRun) sealed(pc uint64) bool {
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
		fmt.Fprintf(&b, "[JOB %d] %s\n   PPs: %s\n", j.ID, q.jobLine(j), s.Reg.Describe(j.Set))
	}
	for i, j := range pending {
		if i == 4 && len(pending) > 5 {
			fmt.Fprintf(&b, "And %d more pending jobs should time allow.\n", len(pending)-i)
			break
		}
		fmt.Fprintf(&b, "[JOB %d] Pending...\n   PPs: %s\n", j.ID, s.Reg.Describe(j.Set))
	}
	for _, j := range deferred {
		fmt.Fprintf(&b, "[JOB %d] Deferred... (%.1f%%; suspended on an ETA of %s; smoothed %s)\n   PPs: %s\n",
			j.ID, 100*j.Proportion, q.rawETA(j.ETA), q.forecast(j), s.Reg.Describe(j.Set))
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
		if b := q.bugs[j.ID]; b != nil && len(b.Files) > 0 {
			where = " " + b.Files[len(b.Files)-2]
		}
		q.mu.Unlock()
		return fmt.Sprintf("BUG FOUND:%s %s (%d interleavings tested)", where, j.Bug, j.Interleavings)
	case quicksand.Cancelled:
		return fmt.Sprintf("Cancelled: %s (%d interleavings tested)", j.Note, j.Interleavings)
	case quicksand.TimedOut:
		return fmt.Sprintf("Timed out (%.1f%%; %d interleavings tested)", 100*j.Proportion, j.Interleavings)
	case quicksand.NotStarted:
		return fmt.Sprintf("Not started (%s)", j.Note)
	}
	return j.Status.String()
}

// clock prints a clock value: a duration, or interleavings.
func (q *qsRun) clock(d time.Duration) string { return clockText(q.cfg.Deterministic, d) }

// report prints the end of the run and returns its exit code.
func (q *qsRun) report(res *quicksand.Result) error {
	s := res.Sched
	// CPU and wall time of the whole run, the runs it resumed included.
	cpu, wall := s.CPU, s.Wall
	sat := 0.0
	if wall > 0 {
		sat = cpu.Seconds() / (wall.Seconds() * float64(q.cfg.Workers))
	}
	// Bugs, deduplicated by signature (the first job to find each).
	var bugs []*QuicksandBug
	seen := map[string]bool{}
	for _, j := range s.Bugs() {
		b := q.bugs[j.ID]
		if b == nil {
			b = &QuicksandBug{Job: j.ID, Message: j.Bug, Signature: j.Bug}
		}
		b.PPSet = s.Reg.Describe(j.Set)
		b.FoundAt = time.Duration(j.FoundAt).Seconds()
		if q.cfg.Deterministic {
			b.FoundAt = float64(j.FoundAt)
		}
		if seen[b.Signature] {
			continue
		}
		seen[b.Signature] = true
		if b.Trace != nil {
			name := strings.TrimSuffix(filepath.Base(q.path), filepath.Ext(q.path)) + fmt.Sprintf("-job%d", j.ID)
			files, err := writeTraces(q.out.traceDir, name, b.Trace)
			if err != nil {
				fmt.Fprintf(q.stderr, "landslide: writing the bug report: %v\n", err)
			}
			b.Files = files
		}
		bugs = append(bugs, b)
	}
	v := quicksandVerdict(s, len(bugs))
	code := v.Code
	var verified, uncovered []string
	for _, j := range s.Completed() {
		verified = append(verified, s.Reg.Describe(j.Set))
	}
	for _, id := range s.Uncovered() {
		uncovered = append(uncovered, s.Reg.PPs[id].String())
	}
	if s.Opt.Control { // races add no PPs: list the candidates themselves
		for _, n := range s.UncoveredRaces() {
			uncovered = append(uncovered, fmt.Sprintf("'data race 0x%x %s / 0x%x %s' (never a PP under --control)", n.PCA, n.WhereA, n.PCB, n.WhereB))
		}
	}
	if q.run != nil {
		q.finishRun(s, v)
	}
	if q.out.json {
		doc := QuicksandJSON{Program: q.path, Result: resultName(code), ExitCode: code, Bugs: bugs, VerifiedPPSets: verified,
			TotalVerification: s.Verified(), UncoveredRacePPs: uncovered, Clock: "wall", Elapsed: time.Duration(s.Now).Seconds(),
			CPUSeconds: cpu.Seconds(), Saturation: sat}
		if q.cfg.Deterministic {
			doc.Clock, doc.Elapsed = "interleavings", float64(s.Now)
		}
		if doc.Bugs == nil {
			doc.Bugs = []*QuicksandBug{}
		}
		for _, j := range s.Jobs {
			doc.Jobs = append(doc.Jobs, QuicksandJobJSON{ID: j.ID, PPSet: s.Reg.Describe(j.Set), Status: j.Status.String(),
				Origin: j.Origin, Interleavings: j.Interleavings, Proportion: finite(j.Proportion), Suspensions: j.Suspensions, Note: j.Note})
		}
		if q.run != nil {
			doc.Run = q.run.ID
		}
		if err := writeJSON(q.cmd.OutOrStdout(), doc); err != nil {
			return err
		}
		return &exitError{code: code}
	}
	out := q.cmd.OutOrStdout()
	q.progress(out, s, true)
	if len(bugs) == 0 {
		fmt.Fprintln(out, "No bugs were found -- you survived!")
	}
	for _, b := range bugs {
		fmt.Fprintf(out, "BUG (job %d, PPs %s, after %s): %s\n", b.Job, b.PPSet, q.clock(s.Jobs[b.Job-1].FoundAt), b.Message)
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
		fmt.Fprintf(out, "Data-race PPs no completed state space covered (inspect them):\n")
		for _, u := range uncovered {
			fmt.Fprintf(out, "   %s\n", u)
		}
	}
	fmt.Fprintf(out, "Elapsed %s; CPU time %s over %d %s (core saturation %.0f%%).\n", q.clock(s.Now),
		cpu.Round(time.Millisecond), q.cfg.Workers, plural(q.cfg.Workers, "worker"), 100*sat)
	if q.run != nil {
		fmt.Fprintf(out, "Stored as run %s in %s (landslide show %s; landslide replay %s for a bug).\n", q.run.ID, q.st.Dir(), q.run.ID, q.run.ID)
	}
	return &exitError{code: code}
}

// finishRun records the run's end: the verdict and the final job table.
func (q *qsRun) finishRun(s *quicksand.Sched, v qsVerdict) {
	state, err := s.Encode()
	if err != nil {
		fmt.Fprintf(q.stderr, "landslide: %v\n", err)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.run.State = state
	q.run.Status, q.run.Message = v.Status, "quicksand: "+v.Message
	if err := q.st.Commit(&store.Commit{Run: q.run, Flush: true}); err != nil {
		fmt.Fprintf(q.stderr, "landslide: %v\n", storeErr(q.st.Dir(), err))
	}
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// processCPU is this process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
