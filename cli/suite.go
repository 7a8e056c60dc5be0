package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"landslide/check"
	"landslide/sdk"
)

// SuiteJSON is suite's --json document.
type SuiteJSON struct {
	Dir      string  `json:"dir"`
	Strategy string  `json:"strategy"`
	PPs      string  `json:"pps"`
	Budget   float64 `json:"budget_seconds"`
	// ProgramOpt and SDKOpt are the optimisation levels the programs and
	// the SDK were built at (as landslide cc builds them); Build says it
	// in a sentence.
	ProgramOpt string         `json:"program_opt"`
	SDKOpt     string         `json:"sdk_opt"`
	Build      string         `json:"build"`
	Programs   []SuiteProgram `json:"programs"`
	Totals     map[string]int `json:"totals"`
	Elapsed    float64        `json:"elapsed_seconds"`
}

// SuiteProgram is one program of a suite run.
type SuiteProgram struct {
	Source string `json:"source"`
	// Result is "bug", "verified", "budget", "limit" (an execution went
	// past a limit of the checker, such as its live threads, --max-threads:
	// no bug, and no verdict) or "build error".
	Result        string  `json:"result"`
	Message       string  `json:"message,omitempty"` // the bug, or the build error's first line
	Interleavings int     `json:"interleavings"`
	Elapsed       float64 `json:"elapsed_seconds"`
}

func newSuiteCmd() *cobra.Command {
	var (
		budget   time.Duration
		strategy string
		syncOnly bool
		asJSON   bool
		keep     string
		cflags   []string
		threads  int
		memory   sizeFlag
		sv       bool
		workers  int
		csvPath  string
	)
	cmd := &cobra.Command{
		Use:   "suite DIR",
		Short: "Build and explore every C and C++ program of a directory (an external pthreads suite), one line each",
		Long: `suite builds each .c file of DIR (and each preprocessed .i, and each C++ one:
.cc, .cpp, .cxx; not its subdirectories) as one program with the SDK (POSIX threads, C11 atomics,
the SV-COMP conventions, the C++ library; no P2 thread library), explores it with every shared access a preemption point
(--sync-only: only the pthread calls) under --strategy (optimal DPOR
by default, falling back to the dpor strategy where explore's does), for at most
--budget each, and reports per program: a bug (with its message),
verified, the budget ran out, a limit of the checker was reached (live
threads, guest memory: --max-threads and --max-memory raise them; no bug,
and no verdict), or the build failed (the compiler's first error). Nothing is
recorded in the store: rerun a program with landslide explore to keep its
exploration and traces (--keep DIR keeps the built ELFs).

Each program is built as landslide cc builds it: its source at -O0, so
that every shared load and store it writes is in the binary (a verdict
never rests on what the compiler deleted), the SDK at -O1; --cflag adds
compiler flags to every source (--cflag -O1 optimises the programs,
--cflag -DLANDSLIDE_NONDET_MAX=3 widens the nondet domain). The second
line (and --json's program_opt, sdk_opt) says which levels were used.

Exit: 1 if some program has a bug, else 3 if some ran out of budget or
reached a limit, else 0; 2 when DIR holds no C file or no program builds.

--svcomp: DIR holds SV-COMP's verification tasks (.yml files naming a
program and the expected verdicts of its properties; subdirectories
too). Each task's unreach-call property is checked under SV-COMP's
conventions (explore --svcomp): context-bounded DPOR for a quarter of
--budget, then --strategy for the rest; the verdict is true, false or
unknown (a property Landslide does not check, an ILP32 task whose code
depends on the data model, a bug that is not reach_error, a limit, the
budget, sampled nondet values), scored as SV-COMP scores it. -c runs
tasks in parallel; --csv FILE writes a row per task as it ends and a
rerun with the same FILE skips those. Exit 1 if some verdict disagrees
with the task's expected one, 3 if interrupted, else 0.`,
		Args: exactly(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if budget <= 0 {
				return usageErr("--budget must be positive")
			}
			if strategy != "dpor" && strategy != "optimal" {
				return usageErr("--strategy %s: suite takes dpor or optimal", strategy)
			}
			if threads < 0 {
				return usageErr("--max-threads %d: must be at least 0 (0: the default)", threads)
			}
			o := suiteOptions{budget: budget, strategy: strategy, syncOnly: syncOnly, asJSON: asJSON, keep: keep, cflags: cflags,
				maxThreads: threads, maxMemory: uint64(memory), workers: workers, csv: csvPath}
			if sv {
				if syncOnly {
					return usageErr("--svcomp explores every shared access: --sync-only does not apply")
				}
				if workers < 1 {
					return usageErr("--cpus %d: at least 1", workers)
				}
				return runSVCOMP(cmd, args[0], o)
			}
			if csvPath != "" || workers != 1 {
				return usageErr("--csv and --cpus go with --svcomp")
			}
			return runSuite(cmd, args[0], o)
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&budget, "budget", 10*time.Second, "time budget of each program")
	fl.StringVar(&strategy, "strategy", "optimal", "exploration strategy: optimal or dpor")
	fl.BoolVar(&syncOnly, "sync-only", false, "preempt only at the pthread calls, not at every shared access")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document on stdout instead of text")
	fl.StringVar(&keep, "keep", "", "write the built ELFs to this directory (default: a temporary one, removed)")
	fl.StringSliceVar(&cflags, "cflag", nil, "extra compiler flags, for every source (--cflag -O1 optimises the programs, built at -O0 by default)")
	fl.IntVar(&threads, "max-threads", 0, fmt.Sprintf("live threads at once in each program; more is a limit of the checker, not a bug (default %d)", check.DefaultMaxThreads))
	fl.BoolVar(&sv, "svcomp", false, "DIR holds SV-COMP tasks (.yml, in subdirectories too): check each one's unreach-call property under SV-COMP's conventions, and score the verdicts")
	fl.IntVarP(&workers, "cpus", "c", 1, "tasks explored in parallel (--svcomp)")
	fl.StringVar(&csvPath, "csv", "", "write one CSV row per task to this file as it ends (--svcomp); rerun with the same file to skip the tasks it holds")
	fl.Var(&memory, "max-memory", fmt.Sprintf("guest memory of each program, as bytes or with K, M, G; more is a limit of the checker, not a bug (default %s)", check.FormatSize(check.DefaultMaxMemory)))
	return cmd
}

type suiteOptions struct {
	budget   time.Duration
	strategy string
	syncOnly bool
	asJSON   bool
	keep     string
	cflags   []string
	// The machine's limits (0: the defaults).
	maxThreads int
	maxMemory  uint64
	// --svcomp: tasks in parallel, and the CSV file.
	workers int
	csv     string
}

func runSuite(cmd *cobra.Command, dir string, o suiteOptions) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return usageErr("suite: %v", err)
	}
	var srcs []string
	for _, e := range ents {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".c") || strings.HasSuffix(n, ".i") || sdk.IsCxx(n)) {
			srcs = append(srcs, e.Name())
		}
	}
	sort.Strings(srcs)
	if len(srcs) == 0 {
		return usageErr("suite: %s holds no .c, .i, .cc, .cpp or .cxx file", dir)
	}
	out := o.keep
	if out == "" {
		if out, err = os.MkdirTemp("", "landslide-suite-"); err != nil {
			return err
		}
		defer os.RemoveAll(out)
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return usageErr("suite: --keep: %v", err)
	}
	pps := "every shared access"
	if o.syncOnly {
		pps = "pthread calls"
	}
	doc := SuiteJSON{Dir: dir, Strategy: o.strategy, PPs: pps, Budget: o.budget.Seconds(), Totals: map[string]int{}}
	doc.ProgramOpt, doc.SDKOpt = sdk.Options{CFlags: o.cflags}.OptLevels()
	doc.Build = buildNote(doc.ProgramOpt, doc.SDKOpt)
	w := cmd.OutOrStdout()
	start := time.Now()
	if !o.asJSON {
		fmt.Fprintf(w, "%d programs in %s: %s, %s as PPs, %s each\neach %s\n", len(srcs), dir, o.strategy, pps, o.budget, doc.Build)
	}
	for _, src := range srcs {
		p := suiteProgram(cmd.Context(), filepath.Join(dir, src), filepath.Join(out, strings.TrimSuffix(src, filepath.Ext(src))+".elf"), o)
		p.Source = src
		doc.Programs = append(doc.Programs, p)
		doc.Totals[p.Result]++
		if !o.asJSON {
			line := fmt.Sprintf("%-40s %-11s %8d interleavings %7.2fs", src, p.Result, p.Interleavings, p.Elapsed)
			if p.Message != "" {
				line += "  " + p.Message
			}
			fmt.Fprintln(w, line)
		}
	}
	doc.Elapsed = time.Since(start).Seconds()
	if o.asJSON {
		if err := writeJSON(w, doc); err != nil {
			return err
		}
	} else {
		limit := ""
		if n := doc.Totals["limit"]; n > 0 {
			limit = fmt.Sprintf(", %d limit", n)
		}
		fmt.Fprintf(w, "%d bug, %d verified, %d budget%s, %d build error, in %.1fs\n",
			doc.Totals["bug"], doc.Totals["verified"], doc.Totals["budget"], limit, doc.Totals["build error"], doc.Elapsed)
	}
	switch {
	case doc.Totals["build error"] == len(srcs):
		return &exitError{code: ExitUsage, msg: "suite: no program built"}
	case doc.Totals["bug"] > 0:
		return &exitError{code: ExitBug}
	case doc.Totals["budget"] > 0 || doc.Totals["limit"] > 0:
		return &exitError{code: ExitBudget}
	}
	return nil
}

// suiteProgram builds and explores one program.
func suiteProgram(ctx context.Context, src, elf string, o suiteOptions) SuiteProgram {
	t0 := time.Now()
	p := SuiteProgram{}
	abs, err := filepath.Abs(src)
	if err == nil {
		var absOut string
		if absOut, err = filepath.Abs(elf); err == nil {
			err = sdk.Build(sdk.Options{Sources: []string{abs}, Output: absOut, Posix: true, CFlags: o.cflags})
		}
	}
	if err != nil {
		p.Result, p.Message = "build error", firstError(err.Error())
		p.Elapsed = time.Since(t0).Seconds()
		return p
	}
	image, err := os.ReadFile(elf)
	if err == nil {
		var pps check.ResolvedPPs
		if pps, err = check.ResolvePPs(image, check.PPRequest{EveryAccess: !o.syncOnly, Args: []string{elf},
			MaxThreads: o.maxThreads, MaxMemory: o.maxMemory}); err == nil {
			spec := check.Spec{Program: elf, Kernel: pps.Kernel, Budget: o.budget}
			spec.Strategy = o.strategy
			spec.Fallback = o.strategy == "optimal" // as explore's: a verdict never rests on a caveat
			var res *check.ExploreResult
			if res, err = check.Explore(ctx, check.Config{Spec: spec, Image: image}, check.Recording{}); err == nil {
				p.Interleavings = res.Interleavings
				switch {
				case res.Limit != nil:
					p.Result, p.Message = "limit", res.Limit.Message
				case res.Bug != nil:
					p.Result, p.Message = "bug", res.Bug.Kind.String()+": "+res.Bug.Message
				case res.Verified:
					p.Result = "verified"
				default:
					p.Result = "budget"
				}
			}
		}
	}
	if err != nil {
		p.Result, p.Message = "build error", firstError(err.Error())
	}
	p.Elapsed = time.Since(t0).Seconds()
	return p
}

// firstError is the first line of a compiler's output that names an
// error, or the message's first line.
func firstError(msg string) string {
	lines := strings.Split(msg, "\n")
	for _, l := range lines {
		if strings.Contains(l, "error:") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}
