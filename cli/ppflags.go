package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"landslide/emu/elfsym"
	"landslide/kernel"
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
	maxInstr   uint64
	maxPPs     int
	maxThread  int

	// testConfig is set by config: the program's LANDSLIDE_CONFIG
	// directives it applied (none when --within, --without or
	// --no-test-config overrode them).
	testConfig []string
}

func (f *ppFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.pps, "pp", strings.Join(kernel.DefaultSyncPPs, ","), "preemption points: function names (PP at entry) and data-race PPs as 0xADDR or symbol+offset, comma-separated; empty for none")
	fl.StringSliceVar(&f.races, "data-race-pp", nil, "instruction addresses (0x...) or symbol+offset to preempt before (repeatable)")
	fl.StringSliceVar(&f.raceFuncs, "data-race-func", nil, "make every shared-memory instruction of this function (not sp/fp-relative) a data-race PP (repeatable)")
	fl.StringSliceVar(&f.within, "within", nil, "only preempt with this function on the stack (repeatable)")
	fl.StringSliceVar(&f.without, "without", nil, "never preempt with this function on the stack (repeatable)")
	fl.BoolVar(&f.noTestCfg, "no-test-config", false, "ignore the program's own LANDSLIDE_CONFIG directives (--within/--without replace them anyway)")
	fl.BoolVar(&f.everywhere, "preempt-everywhere", false, "preempt before every shared access outside the mutex implementation (the thesis's -0)")
	fl.Uint64Var(&f.maxInstr, "max-instructions", 0, "instruction budget of one execution (default 2e9)")
	fl.IntVar(&f.maxPPs, "max-pps", 0, "preemption points in one execution before reporting an infinite loop (default 4000)")
	fl.IntVar(&f.maxThread, "max-threads", 0, "thread limit (default 64)")
}

// config turns the flags into a kernel configuration for the program
// (whose symbols resolve names). ppChanged says whether --pp was given.
func (f *ppFlags) config(data []byte, ppChanged bool) (kernel.Config, error) {
	img, err := elfsym.Parse(data)
	if err != nil {
		return kernel.Config{}, usageErr("%v", err)
	}
	cfg := kernel.Config{MaxInstructions: f.maxInstr, MaxPPs: f.maxPPs, MaxThreads: f.maxThread}
	if ppChanged {
		cfg.SyncPPs = []string{}
		for _, p := range splitList(f.pps) {
			if isAddrSpec(p) {
				a, err := parseAddr(p, img.Symbols)
				if err != nil {
					return cfg, usageErr("--pp %v", err)
				}
				cfg.DataRacePCs = append(cfg.DataRacePCs, a)
				continue
			}
			if _, _, ok := img.Symbols.Lookup(p); !ok {
				return cfg, usageErr("--pp %q: no such function in the program", p)
			}
			cfg.SyncPPs = append(cfg.SyncPPs, p)
		}
	}
	for _, r := range f.races {
		a, err := parseAddr(r, img.Symbols)
		if err != nil {
			return cfg, usageErr("--data-race-pp %v", err)
		}
		if !img.Symbols.IsInstruction(a) {
			return cfg, usageErr("--data-race-pp %s: 0x%x is not an instruction of the program", r, a)
		}
		cfg.DataRacePCs = append(cfg.DataRacePCs, a)
	}
	if len(f.raceFuncs) > 0 {
		pcs, err := kernel.SharedMemoryPCs(data, f.raceFuncs)
		if err != nil {
			return cfg, usageErr("--data-race-func: %v", err)
		}
		cfg.DataRacePCs = append(cfg.DataRacePCs, pcs...)
	}
	for _, pc := range cfg.DataRacePCs {
		if !img.Symbols.IsInstruction(pc) {
			return cfg, usageErr("--pp: data-race PP 0x%x is not an instruction of the program", pc)
		}
	}
	slices.Sort(cfg.DataRacePCs)
	cfg.DataRacePCs = slices.Compact(cfg.DataRacePCs)
	if f.everywhere && len(cfg.DataRacePCs) > 0 {
		return cfg, usageErr("--preempt-everywhere already preempts at every shared access: drop the data-race PPs")
	}
	for _, w := range f.within {
		cfg.Filters = append(cfg.Filters, kernel.Filter{Within: true, Func: w})
	}
	for _, w := range f.without {
		cfg.Filters = append(cfg.Filters, kernel.Filter{Func: w})
	}
	if len(cfg.Filters) == 0 && !f.noTestCfg && len(img.Directives) > 0 {
		// The test's own configuration (thesis §4.5 configured tests this
		// way; the SDK's LANDSLIDE_CONFIG puts it in the binary).
		if cfg.Filters, err = kernel.TestFilters(img.Directives, img.Symbols); err != nil {
			return cfg, usageErr("%v (--no-test-config ignores the program's directives)", err)
		}
		f.testConfig = img.Directives
	}
	for _, flt := range cfg.Filters {
		if _, _, ok := img.Symbols.Lookup(flt.Func); !ok {
			flag := "--without"
			if flt.Within {
				flag = "--within"
			}
			return cfg, usageErr("%s %q: no such function in the program", flag, flt.Func)
		}
	}
	if f.everywhere {
		pcs, err := kernel.SharedAccessPCs(data)
		if err != nil {
			return cfg, usageErr("%v", err)
		}
		cfg.DataRacePCs = pcs
		if cfg.MaxPPs == 0 {
			cfg.MaxPPs = kernel.TooDeepPreemptEverywhere
		}
	}
	return cfg, nil
}

// isAddrSpec tells a data-race PP (0x…, a number, symbol+offset) from a
// function name in --pp.
func isAddrSpec(s string) bool {
	if strings.Contains(s, "+") {
		return true
	}
	_, err := strconv.ParseUint(s, 0, 64)
	return err == nil
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
func (f *ppFlags) program(cmd *cobra.Command, path string, guestArgs []string, out *outputFlags) ([]byte, kernel.Config, error) {
	data, err := loadELF(path)
	if err != nil {
		return nil, kernel.Config{}, err
	}
	if err := checkDir(out.traceDir); err != nil {
		return nil, kernel.Config{}, usageErr("--trace-dir: %v", err)
	}
	kcfg, err := f.config(data, cmd.Flags().Changed("pp"))
	if err != nil {
		return nil, kernel.Config{}, err
	}
	kcfg.Args = append([]string{path}, guestArgs...)
	f.noteTestConfig(cmd.ErrOrStderr(), out.quiet)
	return data, kcfg, nil
}
