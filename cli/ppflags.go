package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"landslide/check"
)

// ppFlags are the PP-set and machine flags shared by run and explore.
type ppFlags struct {
	pps        string
	races      []string
	raceFuncs  []string
	within     []string
	without    []string
	noTestCfg  bool
	everywhere bool
	everyAcc   bool
	maxInstr   uint64
	maxPPs     int
	maxThread  int
	maxMemory  sizeFlag
	waitAll    bool
	thesisLoop bool
	svcomp     bool

	// testConfig is set by config: the program's LANDSLIDE_CONFIG
	// directives it applied (none when --within, --without or
	// --no-test-config overrode them).
	testConfig []string
}

func (f *ppFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.pps, "pp", strings.Join(check.DefaultSyncPPs(), ","), "preemption points: function names (PP at entry) and data-race PPs as 0xADDR or symbol+offset, comma-separated; empty for none")
	fl.StringSliceVar(&f.races, "data-race-pp", nil, "instruction addresses (0x...) or symbol+offset to preempt before (repeatable)")
	fl.StringSliceVar(&f.raceFuncs, "data-race-func", nil, "make every shared-memory instruction of this function (not sp/fp-relative) a data-race PP (repeatable)")
	fl.StringSliceVar(&f.within, "within", nil, "only preempt with this function on the stack (repeatable)")
	fl.StringSliceVar(&f.without, "without", nil, "never preempt with this function on the stack (repeatable)")
	fl.BoolVar(&f.noTestCfg, "no-test-config", false, "ignore the program's own LANDSLIDE_CONFIG directives (--within/--without replace them anyway)")
	fl.BoolVar(&f.everywhere, "preempt-everywhere", false, "preempt before every shared access outside the mutex implementation (the thesis's -0)")
	fl.BoolVar(&f.everyAcc, "every-access", false, "make every shared load, store and atomic a PP (not the thread's own stack, not read-only data; an LR/SC compare-and-swap is one), as Nidhugg and GenMC do")
	fl.Uint64Var(&f.maxInstr, "max-instructions", 0, "instruction budget of one execution (default 2e9)")
	fl.IntVar(&f.maxPPs, "max-pps", 0, "preemption points in one execution before reporting an infinite loop (default 4000; 2^20 with data-race PPs or every access a PP)")
	fl.IntVar(&f.maxThread, "max-threads", 0, fmt.Sprintf("live threads at once; more is a limit of the checker, not a bug (default %d)", check.DefaultMaxThreads))
	fl.Var(&f.maxMemory, "max-memory", fmt.Sprintf("guest memory (heap, new_pages, pthread stacks of 256 KiB each) as bytes or with K, M, G; more is a limit of the checker, not a bug (default %s)", check.FormatSize(check.DefaultMaxMemory)))
	fl.BoolVar(&f.thesisLoop, "thesis-heuristics", false, "block spinning threads by the thesis's counters (10 yields, 20 atomics) instead of the spin-loop rule, as the thesis's figures were made: they can drop legal executions, so the verdict is no verification")
	fl.BoolVar(&f.svcomp, "svcomp", false, "SV-COMP's conventions: calling reach_error or __VERIFIER_error is the bug; abort, a failed assert of glibc's, a failed assume and a deadlock end the execution without one; __VERIFIER_atomic sections run atomically; a condition wait may wake spuriously (use with --every-access)")
	fl.BoolVar(&f.waitAll, "wait-for-threads", false, "returning from main ends the main thread only; the program ends with its last thread (Nidhugg's and GenMC's convention; POSIX ends the process)")
}

// request is the PP set the flags ask for; ppChanged says whether --pp
// was given.
func (f *ppFlags) request(ppChanged bool) check.PPRequest {
	r := check.PPRequest{DataRacePPs: f.races, DataRaceFuncs: f.raceFuncs, Within: f.within, Without: f.without,
		NoTestConfig: f.noTestCfg, Everywhere: f.everywhere, EveryAccess: f.everyAcc, MaxInstructions: f.maxInstr, MaxPPs: f.maxPPs, MaxThreads: f.maxThread, MaxMemory: uint64(f.maxMemory), WaitForThreads: f.waitAll, ThesisHeuristics: f.thesisLoop, SVCOMP: f.svcomp}
	if ppChanged {
		r.PPs = splitList(f.pps)
	}
	return r
}

// config resolves the flags' PP set against the program (check.ResolvePPs:
// its symbols and its own directives).
func (f *ppFlags) config(data []byte, ppChanged bool) (check.ResolvedPPs, error) {
	if f.maxThread < 0 {
		return check.ResolvedPPs{}, usageErr("--max-threads %d: must be at least 0 (0: the default, %d)", f.maxThread, check.DefaultMaxThreads)
	}
	res, err := check.ResolvePPs(data, f.request(ppChanged))
	if err != nil {
		return res, usageErr("%v", err)
	}
	f.testConfig = res.Directives
	return res, nil
}

// noteTestConfig tells the user, on stderr, which of the program's own
// directives config applied, unless quiet.
func (f *ppFlags) noteTestConfig(stderr io.Writer, quiet bool) {
	if len(f.testConfig) == 0 || quiet {
		return
	}
	fmt.Fprintf(stderr, "landslide: the program's LANDSLIDE_CONFIG applies: %s (--no-test-config ignores it)\n", strings.Join(f.testConfig, ", "))
}

// program loads the program, checks the trace directory and builds the
// kernel configuration from the flags (the program's own directives
// included, which it notes on stderr unless out.quiet): the common start
// of explore and quicksand.
func (f *ppFlags) program(cmd *cobra.Command, path string, guestArgs []string, out *outputFlags) ([]byte, check.ResolvedPPs, error) {
	var none check.ResolvedPPs
	data, err := loadELF(path)
	if err != nil {
		return nil, none, err
	}
	if err := checkDir(out.traceDir); err != nil {
		return nil, none, usageErr("--trace-dir: %v", err)
	}
	pps, err := f.config(data, cmd.Flags().Changed("pp"))
	if err != nil {
		return nil, none, err
	}
	pps.Kernel.Args = append([]string{path}, guestArgs...)
	f.noteTestConfig(cmd.ErrOrStderr(), out.quiet)
	return data, pps, nil
}

// sizeFlag is a byte count flag (--max-memory): bytes, or with K, M, G.
type sizeFlag uint64

func (s *sizeFlag) String() string {
	if *s == 0 {
		return "0"
	}
	return check.FormatSize(uint64(*s))
}

func (s *sizeFlag) Set(v string) error {
	n, err := check.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

func (s *sizeFlag) Type() string { return "size" }
