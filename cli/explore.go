package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"landslide/check"
	"landslide/job"
	"landslide/report"
	"landslide/store"
)

type exploreFlags struct {
	ppFlags
	output         outputFlags
	persist        persistFlags
	hb             string
	bound          int
	noSleep        bool
	htm            htmFlags
	full           bool
	strategy       string
	seed           uint64
	depth          int
	lineup         bool
	budget         time.Duration
	maxInterleave  int
	testingMutexes bool
	noStore        bool
	noMinimize     bool
	noFallback     bool
}

func newExploreCmd() *cobra.Command {
	var f exploreFlags
	cmd := &cobra.Command{
		Use:   "explore PROGRAM.elf [-- ARGS...]",
		Short: "Explore one state space (one PP set) systematically with DPOR",
		Long: `Explore runs the program under every interleaving of its preemption points
that dynamic partial-order reduction cannot prove equivalent to one already
tested (thesis §3.4), stopping at the first bug. The default strategy is
optimal DPOR, which runs each Mazurkiewicz trace once; where the
exploration shows it is not exact on the program (a transaction, or an
execution that ends with every thread asleep), it explores again from the
root with the dpor strategy and says so (--no-fallback: do not).

The PP set is --pp (default mutex_lock,mutex_unlock; data-race PPs as 0xADDR
or symbol+offset may be listed too), --data-race-pp, --data-race-func,
narrowed by --within/--without; yields, blocking, thread creation and exit
are always PPs. A test may carry its own within/without directives
(LANDSLIDE_CONFIG in the SDK's landslide.h): they apply unless --within,
--without or --no-test-config is given, and the PP set names them. Data-race candidates are reported under --hb limited (the
thesis's Limited Happens-Before, default) or --hb pure (vector clocks).

Progress (interleavings, estimated % explored, ETA with a likely range)
goes to stderr: a line every --interval, or on a terminal a live bar
redrawn in place. The ETA is the thesis's estimate (§3.4.3) averaged over
the recent part of the run, as the raw one jumps from one interleaving to
the next. At the end:
  exit 1  a bug: its preemption trace is printed and written to --trace-dir
          as .txt, .html (one column per thread) and .json
  exit 0  the state space completed with no bug: verified for this PP set
  exit 3  the budget ran out: coverage and the race candidates seen; or an
          execution went past a limit of the checker (--max-threads,
          --max-memory, the output limit): the exploration stops there, as
          it cannot cover that execution; no bug, and no verdict
  exit 2  usage or input error, or a store failure

The exploration is recorded in the store (--store, default ./.landslide),
committed every --commit-every interleavings or --commit-interval: after a
crash, landslide resume RUN continues from the last commit. replay, races,
show, bugs and export read the stored run; --no-store records nothing.`,
		Args: atLeast(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runExplore(cmd, args[0], args[1:], &f) },
	}
	fl := cmd.Flags()
	f.ppFlags.register(fl)
	fl.StringVar(&f.hb, "hb", "limited", "data-race analysis: limited (Limited Happens-Before) or pure (vector clocks)")
	fl.IntVar(&f.bound, "preemption-bound", -1, "iterative context bounding: explore with at most 0, 1, ... N preemptions (-1: no bounding)")
	fl.BoolVar(&f.noSleep, "no-sleep-sets", false, "turn off the sleep-set refinement of DPOR")
	f.htm.register(fl)
	fl.BoolVar(&f.full, "full", false, "no reduction: every runnable thread at every PP (brute force; --strategy full)")
	fl.StringVar(&f.strategy, "strategy", check.DefaultStrategy, "exploration strategy: "+strategyList())
	fl.Uint64Var(&f.seed, "seed", 0, "the random and pct strategies' seed (random: walk k follows landslide run --seed SEED+k-1)")
	fl.IntVar(&f.depth, "depth", 0, "the pct strategy's depth d: d-1 priority change points per execution (default 3)")
	fl.BoolVar(&f.lineup, "linearizability", false, "check that the calls the program declares (sdk's lineup.h) are linearizable in every interleaving, against the sequential specification learned by running them one at a time in every order")
	fl.DurationVar(&f.budget, "budget", check.DefaultExploreBudget, "time budget (e.g. 30s, 10m, 2h)")
	fl.IntVar(&f.maxInterleave, "max-interleavings", 0, "stop after this many interleavings (0: no limit)")
	fl.BoolVar(&f.testingMutexes, "testing-mutexes", false, "treat accesses inside the mutex implementation as unprotected (default: on for mutex_test programs)")
	fl.BoolVar(&f.noMinimize, "no-minimize", false, "show the bug's trace as found: do not search for the same bug with the fewest preemptions (landslide minimize does it later)")
	fl.BoolVar(&f.noFallback, "no-fallback", false, "optimal DPOR: where it is not exact on the program (a transaction, or an execution ending with every thread asleep), keep going with a caveat instead of exploring again with the dpor strategy")
	fl.BoolVar(&f.noStore, "no-store", false, "do not record the exploration in the store (it cannot be resumed, replayed or re-analysed)")
	f.output.register(fl)
	f.persist.register(fl)
	return cmd
}

func runExplore(cmd *cobra.Command, path string, guestArgs []string, f *exploreFlags) error {
	mode, err := check.ParseHB(f.hb)
	if err != nil {
		return usageErr("--hb: %v", err)
	}
	if f.full && f.bound >= 0 {
		return usageErr("--full explores every interleaving: it cannot be combined with --preemption-bound")
	}
	if f.full && f.noSleep {
		return usageErr("--full does no reduction: --no-sleep-sets has no meaning with it")
	}
	if f.bound < -1 {
		return usageErr("--preemption-bound must be -1 (off) or at least 0")
	}
	switch {
	case f.budget <= 0:
		return usageErr("--budget %s: must be positive", f.budget)
	case f.output.interval <= 0:
		return usageErr("--interval %s: must be positive", f.output.interval)
	case f.maxInterleave < 0:
		return usageErr("--max-interleavings %d: must be at least 0 (0: no limit)", f.maxInterleave)
	}
	strategy := f.strategy
	switch {
	case f.full && cmd.Flags().Changed("strategy") && strategy != "full":
		return usageErr("--full is --strategy full: it cannot be combined with --strategy %s", strategy)
	case f.full:
		strategy = "full"
	case f.bound >= 0 && !cmd.Flags().Changed("strategy"):
		strategy = "icb"
	case !cmd.Flags().Changed("strategy") && (f.noSleep || f.htm.any()):
		strategy = "dpor" // settings of the dpor strategy
	}
	if f.noFallback && strategy != "optimal" {
		return usageErr("--no-fallback is optimal DPOR's: not with --strategy %s", strategy)
	}
	spec := check.Spec{Program: path, PreemptEverywhere: f.everywhere, HB: mode, Budget: f.budget}
	spec.Strategy, spec.NoSleepSets, spec.MaxInterleavings, spec.Seed = strategy, f.noSleep, f.maxInterleave, f.seed
	spec.Depth, spec.Linearizability = f.depth, f.lineup
	spec.AbortCodes, spec.STM, spec.RetrySets, spec.WeakAtomicity = f.htm.abortCodes, f.htm.stm, f.htm.retrySets, f.htm.weak
	if f.bound >= 0 {
		spec.MaxBound = check.Bound(f.bound)
	}
	spec.Fallback = strategy == "optimal" && !f.noFallback
	if err := check.CheckSpec(spec); err != nil {
		return usageErr("%v", err)
	}
	data, pps, err := f.ppFlags.program(cmd, path, guestArgs, &f.output)
	if err != nil {
		return err
	}
	spec.Kernel, spec.TestingMutexes = pps.Kernel, pps.TestingMutexes
	if cmd.Flags().Changed("testing-mutexes") {
		spec.TestingMutexes = f.testingMutexes
	}
	cfg := check.Config{Spec: spec, Image: data}
	f.output.attach(&cfg.Hooks, cmd.ErrOrStderr())
	rec := check.Recording{}
	var st *store.Store
	if !f.noStore {
		var err error
		if st, err = openStore(cmd, false); err != nil {
			return err
		}
		defer st.Close()
		rec = f.persist.recording(cmd, st)
		watchProgress(&cfg.Hooks, st)
	}
	ctx, stop := interruptContext(cmd)
	defer stop()
	res, err := check.Explore(ctx, cfg, rec)
	if err != nil {
		return checkErr(path, err)
	}
	if res.BugBranch != nil && !f.noMinimize {
		minimizeFound(ctx, cmd, cfg, res, st, f.output.quiet)
	}
	if res.Stopped == check.StopBudget || res.Stopped == check.StopLimit {
		res.Narrow, res.NarrowInside, res.NarrowAll = check.NarrowingDirectives(cfg)
	}
	return reportExplore(cmd, path, &f.output, res, storeDirOf(rec))
}

// strategyList names the strategies for --help.
func strategyList() string {
	var parts []string
	for _, s := range check.Strategies() {
		parts = append(parts, s.Name+" ("+s.Doc+")")
	}
	return strings.Join(parts, "; ")
}

// outputFlags are how explore and resume report.
type outputFlags struct {
	traceDir string
	json     bool
	interval time.Duration
	quiet    bool
}

func (o *outputFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&o.traceDir, "trace-dir", ".", "directory for bug reports")
	fl.BoolVar(&o.json, "json", false, "print one JSON document on stdout instead of text")
	fl.DurationVar(&o.interval, "interval", 10*time.Second, "progress report interval")
	fl.BoolVar(&o.quiet, "quiet", false, "no progress reports")
}

// attach sets cfg's progress reports as the flags ask: a line every
// --interval, or on a terminal a live bar redrawn in place.
func (o *outputFlags) attach(cfg *check.Hooks, stderr io.Writer) {
	if o.quiet {
		return
	}
	out := newStatusOut(stderr)
	cfg.ProgressEvery = o.interval
	if out.live() {
		cfg.ProgressEvery = min(o.interval, liveEvery)
	}
	cfg.Progress = func(p check.Progress) {
		switch {
		case p.Final:
			out.Done()
		case out.live():
			out.Update(p.Estimate.Proportion, liveLine(p))
		default:
			out.Line("explore: " + progressLine(p))
		}
	}
}

// reportExplore prints a job's result and returns its exit code; the
// stored run (nil with --no-store) is in the store at dir.
func reportExplore(cmd *cobra.Command, path string, f *outputFlags, r *check.ExploreResult, dir string) error {
	stderr := cmd.ErrOrStderr()
	res, run := r.Result, r.Run
	code := exitCode(r.Verdict.Outcome)
	if res.Caveat != "" {
		fmt.Fprintf(stderr, "landslide: warning: %s\n", res.Caveat)
	}
	if res.NondetSampled {
		fmt.Fprintf(stderr, "landslide: warning: a __VERIFIER_nondet call took its values from a domain cut below its type's (LANDSLIDE_NONDET_MIN/MAX), or a condition wait's second spurious wake-up was not explored: the exploration covered a sample of the inputs\n")
	}
	if res.SetAside > 0 {
		fmt.Fprintf(stderr, "landslide: warning: %d executions reached reach_error only by running a thread inside another's atomic section, which SV-COMP's semantics excludes: explored past, not reported\n", res.SetAside)
	}
	if res.SVCOMP {
		v, why := check.SVCOMPVerdict(r)
		if why != "" {
			why = " (" + why + ")"
		}
		fmt.Fprintf(stderr, "landslide: SV-COMP verdict (unreach-call): %s%s\n", v, why)
	}
	var files []string
	var writeErr error
	if res.Trace != nil {
		// A failure to write must not lose the bug: it is still printed.
		res.Trace.Races = check.ReportRaces(res.Syms, res.Races)
		files, writeErr = writeTraces(f.traceDir, path, res.Trace)
		if writeErr != nil {
			fmt.Fprintf(stderr, "landslide: writing the bug report: %v\n", writeErr)
		}
	}
	if f.json {
		if err := writeExploreJSON(cmd.OutOrStdout(), path, code, r, files); err != nil {
			return err
		}
		return &exitError{code: code}
	}
	out := cmd.OutOrStdout()
	switch {
	case res.Trace != nil:
		if err := res.Trace.WriteText(out); err != nil {
			return err
		}
		if len(files) > 0 {
			fmt.Fprintf(out, "Bug reports: %s\n", strings.Join(files, ", "))
		}
	case res.Verified:
		fmt.Fprintf(out, "Verified: all %d interleavings of this state space completed with no bug (PP set: %s), in %s.\n",
			res.Interleavings, strings.Join(res.PPSet, ", "), res.Elapsed.Round(time.Millisecond))
		if res.Executed != res.Interleavings && res.Bound != check.UnlimitedBound {
			fmt.Fprintf(out, "(%d interleavings run in all, over %d preemption-bound rounds)\n", res.Executed, res.Bound+1)
		}
		if res.SleepBlocked > 0 {
			fmt.Fprintf(out, "(%d executions run in all: %d of them ended sleep-set blocked, with every runnable thread asleep)\n", res.Executed, res.SleepBlocked)
		}
		if res.SelfAborts > 0 {
			fmt.Fprintf(out, "(%d executions run in all: %d of them stopped where a transaction aborted itself, as the abort injected at its _xbegin explores what follows)\n", res.Executed, res.SelfAborts)
		}
		if res.Blocked > 0 {
			fmt.Fprintf(out, "(%d executions run in all: %d of them were blocked, a thread stopped by __VERIFIER_assume(0): infeasible, not counted as interleavings)\n", res.Executed, res.Blocked)
		}
		if res.SpecOrders > 0 {
			fmt.Fprintf(out, "Every interleaving's calls were linearizable, against a sequential specification of %d %s of the calls.\n", res.SpecOrders, plural(res.SpecOrders, "order"))
		}
	case res.Limit != nil:
		fmt.Fprintf(out, "Not verified: interleaving %d went past a limit of the checker; the exploration cannot cover it, so it stopped there, with no bug found (%s).\n",
			res.Executed, coverage(res.Estimate.Proportion, res.Estimate.Size))
		writeLimitText(out, report.NewBug(res.Limit, res.Syms), res.LimitReplay)
	case r.Verdict.Outcome == check.Interrupted:
		fmt.Fprintf(out, "Interrupted after %d interleavings; %s.\n", res.Executed, coverage(res.Estimate.Proportion, res.Estimate.Size))
		if run != nil {
			fmt.Fprintf(out, "Everything up to the last interleaving is committed: `%s` continues from there.\n", again(dir, "resume", run.ID))
		} else {
			fmt.Fprintln(out, "(--no-store: nothing was recorded, so it cannot be resumed.)")
		}
	case res.Complete && res.Budgeted > 0:
		fmt.Fprintf(out, "Not verified: %d of the %d interleavings ran out of the instruction budget without ending (an infinite loop, or raise --max-instructions); no bug otherwise.\n",
			res.Budgeted, res.Executed)
	case res.Restricted && res.Bound >= check.UnlimitedBound:
		fmt.Fprintf(out, "Not verified: the race-reversal walks ran every candidate (%d walks) without finding a bug; they leave every other interleaving out.\n", res.Executed)
	case res.Restricted:
		fmt.Fprintf(out, "Not verified: every interleaving that preempts threads only before atomic instructions, at most %d %s, was tested without finding a bug (%d interleavings in the last round, %d run in all); %s leaves the other switch points out.\n",
			res.Bound, plural(res.Bound, "time"), res.Interleavings, res.Executed, "chess-atomic")
	case res.Bounded:
		fmt.Fprintf(out, "Not verified: every interleaving with at most %d %s was tested without finding a bug (%d interleavings in the last round, %d run in all), but some need more.\n",
			res.Bound, plural(res.Bound, "preemption"), res.Interleavings, res.Executed)
	default:
		cut := ""
		if res.Cut {
			cut = ", inside the next one (cut there, not counted)"
		}
		fmt.Fprintf(out, "Not verified: %s after %d interleavings%s; %s.\n", stopReason(r), res.Executed, cut, coverage(res.Estimate.Proportion, res.Estimate.Size))
		if len(r.Narrow) > 0 {
			var lines, flags []string
			for _, d := range r.Narrow {
				lines = append(lines, fmt.Sprintf("LANDSLIDE_CONFIG(%q);", d))
				flags = append(flags, "--"+d)
			}
			fmt.Fprintf(out, "Hint: %d of the %d PPs of a run are inside the thread library's lifecycle (%s), and each multiplies the interleavings; if the test's subject is not the thread lifecycle, narrow the PP set with %s at file scope (landslide.h), or %s.\n",
				r.NarrowInside, r.NarrowAll, strings.Join(check.LifecycleFuncs, ", "), strings.Join(lines, " "), strings.Join(flags, " "))
		}
	}
	if res.Fallback != "" {
		fmt.Fprintf(out, "Strategy: optimal DPOR fell back to the dpor strategy, which explored again from the start (%s); the counts include the executions optimal DPOR ran before.\n", res.Fallback)
	}
	if res.Trace == nil {
		writeTraceCount(out, r)
	}
	if res.Trace == nil || len(res.Races) == 0 { // the bug report's text lists them
		writeRaces(out, r)
	}
	if res.Verified && len(res.Races) > 0 && !slices.ContainsFunc(res.PPSet, func(p string) bool { return strings.HasPrefix(p, "every shared access") }) {
		fmt.Fprintf(out, "Hint: verified for this PP set only: no interleaving preempted at the %d race %s above; `landslide quicksand %s` adds preemption points there and explores them.\n",
			len(res.Races), plural(len(res.Races), "candidate"), quoteArgs([]string{path})[0])
	}
	if run != nil {
		fmt.Fprintf(out, "Stored as run %s in %s (%s; %s for a bug; %s).\n",
			run.ID, dir, again(dir, "show", run.ID), again(dir, "replay", run.ID), again(dir, "races", run.ID))
	}
	return &exitError{code: code}
}

// writeTraceCount says how many distinct Mazurkiewicz traces the executions
// that ended covered, when some of them repeated one (ICB's rounds,
// CHESS, PCT, DPOR without sleep sets).
func writeTraceCount(out io.Writer, res *check.ExploreResult) {
	ended := res.Executed - res.SleepBlocked - res.SelfAborts - res.Budgeted - res.Blocked
	if res.Traces == 0 || res.TracesAtLeast || res.Traces >= ended {
		return
	}
	fmt.Fprintf(out, "(%d distinct Mazurkiewicz %s among the %d executions that ended: the other %d each repeated an equivalent one)\n",
		res.Traces, plural(res.Traces, "trace"), ended, ended-res.Traces)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

func stopReason(res *check.ExploreResult) string {
	switch res.Stopped {
	case check.StopBudget:
		return "the time budget ran out"
	case check.StopLimit:
		return "the interleaving limit was reached"
	case check.StopCheckerLimit:
		return "a limit of the checker was reached"
	}
	return res.Stopped.String()
}

func coverage(p, size float64) string {
	if p <= 0 || math.IsNaN(size) || math.IsInf(size, 0) {
		return "coverage unknown"
	}
	return fmt.Sprintf("estimated %.1f%% explored of about %.0f interleavings", 100*p, size)
}

// progressLine is a plain progress line: the ETA is the smoothed one, with
// its range, in wall time.
func progressLine(p check.Progress) string {
	e := p.Estimate
	wall := max(p.Wall, e.Elapsed)
	eta := forecastText(p.Forecast, wallScale(p.Wall, estElapsed(p)), false)
	return fmt.Sprintf("%d interleavings, %s, %s, elapsed %s, %d race candidates",
		p.Interleavings, coverage(e.Proportion, e.Size), eta, wall.Round(time.Second), p.Races)
}

// liveLine is the live bar's status: a progress line, shorter, the ETA
// first (a narrow terminal cuts the end).
func liveLine(p check.Progress) string {
	e := p.Estimate
	size := "(size unknown)"
	if e.Proportion > 0 && !math.IsInf(e.Size, 0) && !math.IsNaN(e.Size) {
		size = fmt.Sprintf("of ~%.0f", e.Size)
	}
	return strings.Join([]string{
		liveForecastText(p.Forecast, wallScale(p.Wall, estElapsed(p)), false),
		fmt.Sprintf("%d %s interleavings", p.Interleavings, size),
		fmt.Sprintf("%s elapsed", max(p.Wall, e.Elapsed).Round(time.Second)),
		fmt.Sprintf("%d races", p.Races)}, statusSep)
}

// estElapsed is the estimator's time over all the rounds of a bounded
// search (the estimate's own restarts at each).
func estElapsed(p check.Progress) time.Duration {
	return max(p.Forecast.Elapsed, p.Estimate.Elapsed)
}

// writeRaces lists the data-race candidates with both stacks (the same
// text as the .txt report's).
func writeRaces(w io.Writer, res *check.ExploreResult) {
	report.WriteRaces(w, check.ReportRaces(res.Syms, res.Races))
}

// raceLine is a candidate's one-line summary.
func raceLine(r *check.Candidate) string { return report.NewRace(r, nil, nil).Line() }

// checkDir makes sure reports can be written to dir before a long
// exploration starts.
func checkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fh, err := os.CreateTemp(dir, ".landslide-check-*")
	if err != nil {
		return err
	}
	name := fh.Name()
	fh.Close()
	return os.Remove(name)
}

// writeTraces writes the bug report as text, HTML and JSON.
func writeTraces(dir, program string, t *report.Trace) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, "landslide-bug-"+strings.TrimSuffix(filepath.Base(program), filepath.Ext(program)))
	var files []string
	for _, r := range []struct {
		ext   string
		write func(io.Writer) error
	}{{".txt", t.WriteText}, {".html", t.WriteHTML}, {".json", t.WriteJSON}} {
		name := base + r.ext
		fh, err := os.Create(name)
		if err != nil {
			return nil, err
		}
		if err := r.write(fh); err != nil {
			fh.Close()
			return nil, err
		}
		if err := fh.Close(); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	return files, nil
}

func writeExploreJSON(w io.Writer, path string, code int, r *check.ExploreResult, files []string) error {
	res, run := r, r.Run
	finite := func(v float64) float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return v
	}
	bound := res.Bound
	if bound == check.UnlimitedBound {
		bound = 0 // no bounding: omitted
	}
	doc := ExploreJSON{
		Program: path, Result: resultName(code), ExitCode: code, Interleavings: res.Interleavings,
		Executed: res.Executed, SleepBlocked: res.SleepBlocked, Blocked: res.Blocked, SelfAborts: res.SelfAborts, Transitions: res.Transitions, Complete: res.Complete, Verified: res.Verified,
		Bounded: res.Bounded, Bound: bound, Stopped: res.Stopped.String(), Cut: res.Cut, Proportion: finite(res.Estimate.Proportion),
		EstimatedSize: finite(res.Estimate.Size), ElapsedSec: res.Elapsed.Seconds(), PPSet: res.PPSet,
		Races: []RaceJSON{}, Bugs: []*BugJSON{}, SpecOrders: res.SpecOrders, Budgeted: res.Budgeted,
		Traces: res.Traces, TracesAtLeast: res.TracesAtLeast, Caveat: res.Caveat, Fallback: res.Fallback,
	}
	switch {
	case code == ExitOK:
		doc.Result = "verified"
	case res.Limit != nil:
		doc.Result = "limit"
		doc.Limit = newLimitJSON(report.NewBug(res.Limit, res.Syms), res.LimitReplay)
	}
	if run != nil {
		doc.Run = run.ID
	}
	if res.Trace != nil && res.Trace.Bug != nil {
		var sig string
		if res.Bug != nil {
			_, sig = job.Signature(res.Syms, res.Bug)
		}
		doc.Bugs = append(doc.Bugs, newBugJSON(res.Trace.Bug, sig, res.Trace, files))
	}
	for _, r := range res.Races {
		doc.Races = append(doc.Races, newRaceJSON(r.Candidate, r.StackA, r.StackB))
	}
	return writeJSON(w, doc)
}

// newRaceJSON is a candidate in explore's and races' JSON.
func newRaceJSON(c *check.Candidate, stackA, stackB []report.Frame) RaceJSON {
	side := func(s check.RaceSide) RaceSideJSON {
		return RaceSideJSON{PC: s.PC, Thread: int32(s.Thread), Write: s.Write, Atomic: s.Atomic}
	}
	return RaceJSON{Addr: c.A.Addr, A: side(c.A), B: side(c.B), BothOrder: c.BothOrder,
		FirstInterleaving: c.FirstInterleaving, Realloc: c.Realloc, Count: c.Count, StackA: stackA, StackB: stackB}
}
