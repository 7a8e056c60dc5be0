// Command qseval is the thesis's Table 4.1 on our fixtures: every
// seeded-bug thread library (fixtures/src/lib/<lib>) built with every test
// program that passes against the reference library, each binary run by
// check.Quicksand (the library under `landslide quicksand`) under five
// configurations with the same CPU budget per cell, each named here by
// the quicksand flags that give it:
//
//	QS-LHB  quicksand (Iterative Deepening, Limited Happens-Before)
//	QS-PHB  quicksand --hb pure
//	ICB     quicksand --control --icb
//	DPOR    quicksand --control
//	ShMem   quicksand --control --preempt-everywhere
//
// every one as with --no-store --first-bug. It prints Markdown:
// one table with a row per library/test and a column per configuration
// ("bug 1.2s": the first bug and the wall clock to it, found_at;
// "verified 3.4s": total verification; "complete 0.5s": every state space
// completed with no bug but data-race candidates stayed uncovered, which
// is how --control ends on a racy program; "—": the budget ran out), the
// totals per configuration, and which bugs were found (BENCHMARKS.md,
// "Quicksand evaluation").
//
//	go run ./bench/cmd/qseval -budget 6s -compare-workers > /tmp/qseval.md
//	go run ./bench/cmd/qseval -own -budget 20s > /tmp/qsown.md
//
// The budget is CPU time, as in the thesis's evaluation (Quicksand: 1 h
// of wall clock on 10 CPUs; the single-state-space controls: 10 h on one
// CPU). With -cpus N, a Quicksand cell runs with -c N and a wall-clock
// budget of budget/N, one cell at a time; the controls, which explore one
// state space and so use one CPU, run with -c 1 and the whole budget, N
// cells at once. Either way each cell gets the same CPU time and the
// evaluation keeps N CPUs busy. -compare-workers runs every cell with
// -cpus 1 and with -cpus 2, alternating by blocks of -block rows (1 then
// 2, then 2 then 1, ...) so that a drift in the virtual machine's speed
// weighs on both, and prints the ratio of their wall times, for the
// Quicksand cells and the controls apart too, with the hypervisor's steal
// during each (/proc/stat).
//
// Quicksand's home stretch (no suspension once less than this much budget
// is left; 60 s for the thesis's 1 h) would exceed any cell's budget under
// a minute and turn suspension off altogether, so each Quicksand cell gets
// a home stretch of 1/60 of its wall-clock budget, as in a 1 h run, unless
// -home-stretch names one.
//
// The tests are the reference tests expected to pass, but the thesis
// figures, race demonstrations and atomic-instruction tests (see skipped;
// -tests names any of them, "all" takes every one); -own keeps only each
// library's own fixture, the test shipped to expose its bug.
//
// The library × test binaries are built with the SDK into a temporary
// directory (removed at the end unless -keep; -reuse takes a kept one's
// binaries instead of building them again), once per run. Progress goes
// to stderr. The exit status is 2 if a binary did not build or a cell
// ended in an error, else 0.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"landslide/check"
	"landslide/fixtures"
	"landslide/quicksand"
	"landslide/sdk"
)

// configuration is one column of the table: what it sets in the
// Quicksand spec, and the quicksand flags a user would give for it. A
// control explores a single state space, so it uses one CPU.
type configuration struct {
	name       string
	flags      string // the equivalent `landslide quicksand` flags
	hb         check.HB
	control    bool
	icb        bool
	everywhere bool
}

var configurations = []configuration{
	{name: "QS-LHB", flags: "--hb limited", hb: check.Limited},
	{name: "QS-PHB", flags: "--hb pure", hb: check.Pure},
	{name: "ICB", flags: "--control --icb", hb: check.Limited, control: true, icb: true},
	{name: "DPOR", flags: "--control", hb: check.Limited, control: true},
	{name: "ShMem", flags: "--control --preempt-everywhere", hb: check.Limited, control: true, everywhere: true},
}

// selectConfigurations narrows configurations to the comma-separated
// names in list (all when empty), in the table's order.
func selectConfigurations(list string) error {
	if list == "" {
		return nil
	}
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		want[strings.TrimSpace(name)] = true
	}
	var out []configuration
	for _, c := range configurations {
		if want[c.name] {
			out = append(out, c)
			delete(want, c.name)
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("-configs: unknown configuration %q (have QS-LHB, QS-PHB, ICB, DPOR, ShMem)", sortedKeys(want)[0])
	}
	configurations = out
	return nil
}

// hasConfiguration reports whether a control (or, with false, a
// Quicksand configuration) is among those selected.
func hasConfiguration(control bool) bool {
	return slices.ContainsFunc(configurations, func(c configuration) bool { return c.control == control })
}

// skipped are the reference tests left out unless -tests names them: the
// thesis figures and race demonstrations (fig*, realloc_race, xplusplus),
// a test of the yield loop, and the atomic-instruction tests, none of
// which exercises the thread library's synchronization.
var skipped = map[string]bool{
	"fig1": true, "fig2_6a": true, "fig2_6b": true, "realloc_race": true, "xplusplus": true, "yield_loop_ok": true,
	"atomic_compare_swap": true, "atomic_exchange": true, "atomic_fetch_add": true, "atomic_fetch_sub": true,
}

// program is one library × test binary: a row of the table.
type program struct {
	lib, test string
	path      string
	shipped   bool // the library's own fixture: the test known to expose its bug
	buildErr  error
}

func (p *program) name() string { return p.lib + "/" + p.test }

// bug is one bug a cell found.
type bug struct {
	Message string
	PPSet   string
	FoundAt time.Duration // the Quicksand clock (wall time) when its job found it
}

// cell is one run: a program under a configuration.
type cell struct {
	outcome check.Outcome
	bugs    []bug
	elapsed time.Duration // the Quicksand clock at the end
	wall    time.Duration
	err     string
}

// first is the cell's earliest bug.
func (c *cell) first() *bug {
	var b *bug
	for i := range c.bugs {
		if b == nil || c.bugs[i].FoundAt < b.FoundAt {
			b = &c.bugs[i]
		}
	}
	return b
}

// ended reports whether the cell ended before its budget (a bug, a total
// verification, or every state space complete).
func (c *cell) ended() bool {
	return c.err == "" && (c.outcome == check.Bug || c.outcome == check.Verified || c.complete())
}

// complete reports whether every state space completed with no bug, yet
// data-race candidates stayed uncovered (under --control races never
// become PPs), so there was no total verification (check.NoBug).
func (c *cell) complete() bool { return c.err == "" && c.outcome == check.NoBug }

func (c *cell) text() string {
	switch {
	case c.err != "":
		return "error: " + c.err
	case c.outcome == check.Bug:
		if b := c.first(); b != nil {
			return fmt.Sprintf("bug %.1fs", b.FoundAt.Seconds())
		}
		return "bug ?"
	case c.outcome == check.Verified:
		return fmt.Sprintf("verified %.1fs", c.elapsed.Seconds())
	case c.complete():
		return fmt.Sprintf("complete %.1fs", c.elapsed.Seconds())
	case c.outcome == check.Budget:
		return "—"
	}
	return c.outcome.String()
}

// evaluation is every cell of one pass: cells[program][configuration],
// with the wall time of the whole pass and of its two phases.
type evaluation struct {
	cpus            int
	cells           [][]cell
	qsWall, ctlWall time.Duration
	steal           float64 // the hypervisor's share of the CPUs' time during the pass, -1 if unknown
}

// wall is the pass's wall time: its Quicksand cells and its controls.
func (e *evaluation) wall() time.Duration { return e.qsWall + e.ctlWall }

type options struct {
	budget      time.Duration // CPU time per cell
	cpus        int
	homeStretch time.Duration // 0: 1/60 of a Quicksand cell's wall-clock budget
	tmp         string
	strategy    string // the state spaces' strategy ("": dpor)
}

// cellSpec is the Quicksand spec of one cell: the configuration's
// settings, --first-bug, and the same CPU time for every configuration
// (see the package comment).
func (o options) cellSpec(cfg configuration) check.QuicksandSpec {
	spec := check.QuicksandSpec{
		Base:    check.Spec{HB: cfg.hb, PreemptEverywhere: cfg.everywhere},
		Options: quicksand.Options{Control: cfg.control, FirstBug: true, Workers: 1},
	}
	if o.strategy != "" && !cfg.icb {
		spec.Base.Strategy = o.strategy
		spec.Base.Fallback = o.strategy == "optimal" // as quicksand --strategy optimal
	}
	if cfg.icb {
		spec.Base.Strategy = "icb"
	}
	if cfg.control {
		spec.Options.Budget = o.budget
		return spec
	}
	spec.Options.Workers = o.cpus
	spec.Options.Budget = o.budget / time.Duration(o.cpus)
	spec.Options.HomeStretch = o.homeStretch
	if o.homeStretch == 0 {
		spec.Options.HomeStretch = spec.Options.Budget / 60
	}
	return spec
}

func main() {
	budget := flag.Duration("budget", 10*time.Second, "CPU time of each cell: a Quicksand cell gets budget/cpus of wall clock on -cpus workers, a control the whole budget on one")
	cpus := flag.Int("cpus", runtime.NumCPU(), "CPUs the evaluation uses: Quicksand's -c, and how many control cells run at once")
	homeStretch := flag.Duration("home-stretch", 0, "Quicksand's --home-stretch in every Quicksand cell (0: 1/60 of the cell's wall-clock budget)")
	libs := flag.String("libs", "", "comma-separated seeded-bug libraries to evaluate (default: all)")
	tests := flag.String("tests", "", "comma-separated reference tests to build with them (default: the passing tests but "+strings.Join(sortedKeys(skipped), ", ")+"; \"all\" for every passing test)")
	own := flag.Bool("own", false, "only each library's own fixture (the test shipped to expose its bug), not every library × test")
	compare := flag.Bool("compare-workers", false, "run the whole evaluation with -cpus 1 and with -cpus 2, alternating by blocks of rows, and compare their wall times")
	block := flag.Int("block", 4, "with -compare-workers: rows run under one CPU count before switching to the other")
	keep := flag.Bool("keep", false, "keep the temporary directory of binaries and bug reports")
	configs := flag.String("configs", "", "comma-separated configurations (columns) to run, e.g. QS-LHB,QS-PHB (default: all)")
	strategy := flag.String("strategy", check.DefaultStrategy, "the state spaces' strategy, as quicksand --strategy (optimal falls back to dpor as quicksand's does; ICB configurations keep icb)")
	reuse := flag.String("reuse", "", "a directory an earlier run kept (-keep): use the binaries in it instead of building them again (only if the sources have not changed since)")
	flag.Parse()
	if *cpus < 1 || *budget <= 0 || *homeStretch < 0 || *block < 1 {
		fmt.Fprintln(os.Stderr, "qseval: -cpus and -block must be at least 1, -budget positive, -home-stretch at least 0")
		os.Exit(2)
	}
	if err := selectConfigurations(*configs); err != nil {
		fmt.Fprintln(os.Stderr, "qseval:", err)
		os.Exit(2)
	}
	if *compare && isSet("cpus") {
		fmt.Fprintln(os.Stderr, "qseval: -compare-workers runs -cpus 1 then -cpus 2: drop -cpus")
		os.Exit(2)
	}
	if err := os.Chdir(fixtures.Root()); err != nil {
		fmt.Fprintln(os.Stderr, "qseval:", err)
		os.Exit(2)
	}
	progs, err := selectPrograms(*libs, *tests, *own)
	if err != nil {
		fmt.Fprintln(os.Stderr, "qseval:", err)
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "qseval")
	if *reuse != "" {
		tmp, err = *reuse, nil
		if _, err := os.Stat(filepath.Join(tmp, "bin")); err != nil {
			fmt.Fprintln(os.Stderr, "qseval: -reuse:", err)
			os.Exit(2)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "qseval:", err)
		os.Exit(2)
	}
	if *keep || *reuse != "" {
		fmt.Fprintln(os.Stderr, "qseval: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	start := time.Now()
	load0 := loadAverage()
	build(progs, tmp, *reuse != "")
	buildTime := time.Since(start)
	opt := options{budget: *budget, cpus: *cpus, homeStretch: *homeStretch, tmp: tmp, strategy: *strategy}

	var evals []*evaluation
	if *compare {
		evals = evaluate(progs, opt, []int{1, 2}, *block)
	} else {
		evals = evaluate(progs, opt, []int{*cpus}, len(progs))
	}

	fmt.Printf("`go run ./bench/cmd/qseval %s` at %s on %s/%s, %d CPUs (runtime.NumCPU); load average %s before, %s after.\n\n",
		strings.Join(os.Args[1:], " "), start.UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), load0, loadAverage())
	nlibs, ntests := count(progs)
	rows := fmt.Sprintf("%d seeded-bug libraries × %d tests = %d binaries", nlibs, ntests, len(progs))
	if *own {
		rows = fmt.Sprintf("%d seeded-bug libraries, each with its own test: %d binaries", nlibs, len(progs))
	}
	built := fmt.Sprintf("built in %s", buildTime.Round(time.Second))
	if *reuse != "" {
		built = "built by an earlier run, reused"
	}
	hs := "1/60 of its wall-clock budget"
	if *homeStretch > 0 {
		hs = homeStretch.String()
	}
	fmt.Printf("%s (%s), × %d configurations, %s of CPU time per cell: "+
		"each `landslide quicksand BINARY --no-store --first-bug` plus the configuration's flags "+
		"(QS-LHB `--hb limited`, QS-PHB `--hb pure`, ICB `--control --icb`, DPOR `--control`, ShMem `--control --preempt-everywhere`). "+
		"With N CPUs a Quicksand cell runs with `-c N --budget %s/N` and a home stretch of %s, one cell at a time; "+
		"a control (one state space, one CPU) runs with `-c 1 --budget %s`, N cells at once. "+
		"A cell is the first bug and the wall clock to it (found_at_seconds), a total verification and its time, "+
		"\"complete\" when every state space completed with no bug but data-race candidates stayed uncovered "+
		"(no total verification: under --control races never become PPs; quicksand ends early, exit 0), or — when the budget ran out. "+
		"A row marked * is the library's own fixture (the test shipped to expose its bug). %s wall time in all.\n",
		rows, built, len(configurations), *budget, *budget, hs, *budget, time.Since(start).Round(time.Second))

	failed := false
	for _, p := range progs {
		if p.buildErr != nil {
			failed = true
		}
	}
	for _, e := range evals {
		if printEvaluation(progs, e, *compare) {
			failed = true
		}
	}
	if *compare {
		printComparison(evals[0], evals[1], *budget, *block)
	}
	if failed {
		os.Exit(2)
	}
}

// selectPrograms is every chosen library × every chosen test (with own,
// only the pairs that are fixtures).
func selectPrograms(libList, testList string, own bool) ([]*program, error) {
	var libs []string
	shipped := map[string]bool{}
	seen := map[string]bool{}
	for _, f := range fixtures.All() {
		if f.Lib == "" || f.Lib == "ref" || strings.HasPrefix(f.Name, "bugs/") || strings.HasPrefix(f.Name, "small/") {
			continue
		}
		shipped[f.Name] = true
		if !seen[f.Lib] {
			seen[f.Lib] = true
			libs = append(libs, f.Lib)
		}
	}
	var tests []fixtures.Fixture
	for _, f := range fixtures.All() {
		if f.Lib == "ref" && f.Expect == "ok" && strings.HasPrefix(f.Name, "ref/") {
			tests = append(tests, f)
		}
	}
	libs, err := restrict(libs, libList, func(s string) string { return s }, nil)
	if err != nil {
		return nil, fmt.Errorf("-libs: %w", err)
	}
	name := func(f fixtures.Fixture) string { return strings.TrimPrefix(f.Name, "ref/") }
	if testList != "all" {
		tests, err = restrict(tests, testList, name, func(f fixtures.Fixture) bool { return !skipped[name(f)] })
		if err != nil {
			return nil, fmt.Errorf("-tests: %w", err)
		}
	}
	var progs []*program
	for _, l := range libs {
		for _, t := range tests {
			if own && !shipped[l+"/"+name(t)] {
				continue
			}
			progs = append(progs, &program{lib: l, test: name(t), shipped: shipped[l+"/"+name(t)]})
		}
	}
	if len(progs) == 0 {
		return nil, fmt.Errorf("nothing to evaluate")
	}
	return progs, nil
}

// restrict keeps the items a comma list names (in their catalog order), or,
// for an empty list, those def accepts (all of them for a nil def).
func restrict[T any](all []T, list string, name func(T) string, def func(T) bool) ([]T, error) {
	var out []T
	if strings.TrimSpace(list) == "" {
		for _, x := range all {
			if def == nil || def(x) {
				out = append(out, x)
			}
		}
		return out, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimPrefix(strings.TrimSpace(n), "ref/"); n != "" {
			want[n] = true
		}
	}
	for _, x := range all {
		if want[name(x)] {
			out = append(out, x)
			delete(want, name(x))
		}
	}
	if len(want) > 0 {
		var names []string
		for _, x := range all {
			names = append(names, name(x))
		}
		return nil, fmt.Errorf("unknown %s (choose from %s)", strings.Join(sortedKeys(want), ", "), strings.Join(names, ", "))
	}
	return out, nil
}

// build compiles every program into tmp/bin/<lib>/<test>.elf, as many at
// once as there are CPUs; with reuse, only those not there already. The
// test's base name is kept: quicksand turns on testing mutexes for a
// program named mutex_test*.
func build(progs []*program, tmp string, reuse bool) {
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for _, p := range progs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f, _ := fixtures.Lookup("ref/" + p.test)
			f.Lib = p.lib
			f.Output = filepath.Join(tmp, "bin", p.lib, p.test+".elf")
			p.path = f.Output
			if _, err := os.Stat(p.path); reuse && err == nil {
				return
			}
			p.buildErr = sdk.Build(f.BuildOptions())
			if p.buildErr != nil {
				fmt.Fprintf(os.Stderr, "qseval: building %s: %v\n", p.name(), p.buildErr)
			}
		}()
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "qseval: %d binaries in %s\n", len(progs), tmp)
}

// evaluate runs every cell once per CPU count in cpus, block rows at a
// time: for each block of rows, under each CPU count in turn (in reverse
// order every other block, so that a drift in the machine's speed weighs
// on both alike), first the block's Quicksand cells one at a time, each
// on that many workers, then its control cells that many at once, each on
// one. It returns one evaluation per CPU count.
func evaluate(progs []*program, o options, cpus []int, block int) []*evaluation {
	evals := make([]*evaluation, len(cpus))
	used := make([]cpuStat, len(cpus)) // the machine's CPU time during each evaluation's cells
	for n, c := range cpus {
		evals[n] = &evaluation{cpus: c, cells: make([][]cell, len(progs))}
		for i := range progs {
			evals[n].cells[i] = make([]cell, len(configurations))
		}
	}
	type task struct{ i, k int }
	total := len(progs) * len(configurations) * len(cpus)
	var mu sync.Mutex
	done := 0
	runTasks := func(e *evaluation, o options, tasks []task, at int) time.Duration {
		start := time.Now()
		ch := make(chan task)
		go func() {
			for _, t := range tasks {
				ch <- t
			}
			close(ch)
		}()
		var wg sync.WaitGroup
		for range at {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for t := range ch {
					p, cfg, c := progs[t.i], configurations[t.k], &e.cells[t.i][t.k]
					if p.buildErr != nil {
						c.err = "build failed"
					} else {
						dir := filepath.Join(o.tmp, fmt.Sprintf("traces-cpus%d", o.cpus), cfg.name, p.lib, p.test)
						*c = run(p.path, cfg, o, dir)
					}
					mu.Lock()
					done++
					extra := ""
					if b := c.first(); b != nil {
						extra = fmt.Sprintf(" [%s] %s", b.PPSet, b.Message)
					}
					fmt.Fprintf(os.Stderr, "qseval: cpus=%d [%d/%d] %-6s %s: %s (wall %s)%s\n", o.cpus, done, total, cfg.name, p.name(),
						c.text(), c.wall.Round(100*time.Millisecond), extra)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	for b0 := 0; b0 < len(progs); b0 += block {
		var qs, ctl []task
		for i := b0; i < min(b0+block, len(progs)); i++ {
			for k, cfg := range configurations {
				if cfg.control {
					ctl = append(ctl, task{i, k})
				} else {
					qs = append(qs, task{i, k})
				}
			}
		}
		for m := range cpus {
			n := m
			if (b0/block)%2 == 1 {
				n = len(cpus) - 1 - m
			}
			e, o := evals[n], o
			o.cpus = e.cpus
			st0 := readCPUStat()
			qsWall := runTasks(e, o, qs, 1)
			ctlWall := runTasks(e, o, ctl, o.cpus)
			st1 := readCPUStat()
			e.qsWall += qsWall
			e.ctlWall += ctlWall
			used[n].total += st1.total - st0.total
			used[n].steal += st1.steal - st0.steal
		}
	}
	for n, e := range evals {
		e.steal = used[n].share()
	}
	return evals
}

// run is one cell: check.Quicksand, the library under `landslide
// quicksand`, on the program with the cell's spec and no store; each bug's
// trace is written to traceDir.
func run(path string, cfg configuration, o options, traceDir string) cell {
	t0 := time.Now()
	c := cell{}
	res, err := quicksandCell(path, o.cellSpec(cfg), traceDir)
	c.wall = time.Since(t0)
	if err != nil {
		c.err = oneLine(err.Error(), 100)
		return c
	}
	c.outcome, c.elapsed = res.Verdict.Outcome, time.Duration(res.Sched.Now)
	for _, b := range res.Bugs {
		c.bugs = append(c.bugs, bug{Message: b.Message, PPSet: b.PPSet, FoundAt: b.FoundAt})
	}
	return c
}

// quicksandCell loads the program, resolves its PP set as quicksand's
// flags would (the default sync PPs, the program's own directives) and
// runs Quicksand.
func quicksandCell(path string, spec check.QuicksandSpec, traceDir string) (*check.QuicksandResult, error) {
	image, err := check.LoadELF(path)
	if err != nil {
		return nil, err
	}
	pps, err := check.ResolvePPs(image, check.PPRequest{Everywhere: spec.Base.PreemptEverywhere, Args: []string{path}})
	if err != nil {
		return nil, err
	}
	spec.Base.Program, spec.Base.Kernel, spec.Base.TestingMutexes = path, pps.Kernel, pps.TestingMutexes
	res, err := check.Quicksand(context.Background(), spec, image, check.Recording{}, check.QuicksandHooks{})
	if err != nil {
		return nil, err
	}
	for _, b := range res.Bugs {
		if b.Trace == nil {
			continue
		}
		if err := os.MkdirAll(traceDir, 0o755); err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := b.Trace.WriteText(&buf); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(traceDir, fmt.Sprintf("job%d.txt", b.Job)), buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// printEvaluation prints one pass's table, totals and bugs; it reports
// whether a cell ended in an error.
func printEvaluation(progs []*program, e *evaluation, compare bool) bool {
	failed := false
	head := fmt.Sprintf("%d CPU", e.cpus)
	if e.cpus > 1 {
		head += "s"
	}
	walls := fmt.Sprintf("%s wall time for the cells: %s for the Quicksand ones, %s for the controls; %s of CPU time stolen by the hypervisor",
		e.wall().Round(time.Second), e.qsWall.Round(time.Second), e.ctlWall.Round(time.Second), percent(e.steal))
	if compare {
		fmt.Printf("\n#### With %s (%s)\n", head, walls)
	} else {
		fmt.Printf("\nWith %s: %s.\n", head, walls)
	}
	fmt.Println()
	fmt.Print("| library/test |")
	for _, c := range configurations {
		fmt.Printf(" %s |", c.name)
	}
	fmt.Print("\n|---|")
	for range configurations {
		fmt.Print("---|")
	}
	fmt.Println()
	for i, p := range progs {
		mark := ""
		if p.shipped {
			mark = "*"
		}
		fmt.Printf("| %s%s |", p.name(), mark)
		for k := range configurations {
			c := &e.cells[i][k]
			if c.err != "" {
				failed = true
			}
			fmt.Printf(" %s |", strings.ReplaceAll(c.text(), "|", "/"))
		}
		fmt.Println()
	}

	fmt.Println()
	fmt.Println("| configuration | bugs found | of them on the library's own test | total verifications | complete, not verified | timeouts | errors | cells |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	shippedRows := 0
	for _, p := range progs {
		if p.shipped {
			shippedRows++
		}
	}
	for k, cfg := range configurations {
		var bugs, own, verified, complete, timeouts, errs int
		for i, p := range progs {
			c := &e.cells[i][k]
			switch {
			case c.err != "":
				errs++
			case c.outcome == check.Bug:
				bugs++
				if p.shipped {
					own++
				}
			case c.outcome == check.Verified:
				verified++
			case c.complete():
				complete++
			case c.outcome == check.Budget:
				timeouts++
			}
		}
		fmt.Printf("| %s | %d | %d of %d | %d | %d | %d | %d | %d |\n", cfg.name, bugs, own, shippedRows, verified, complete, timeouts, errs, len(progs))
	}

	// The bugs themselves: a row's distinct first bugs and who found them.
	var lines []string
	for i, p := range progs {
		var order []string
		by := map[string][]string{}
		for k, cfg := range configurations {
			if b := e.cells[i][k].first(); b != nil && e.cells[i][k].err == "" {
				m := oneLine(b.Message, 110)
				if by[m] == nil {
					order = append(order, m)
				}
				by[m] = append(by[m], cfg.name)
			}
		}
		for _, m := range order {
			lines = append(lines, fmt.Sprintf("- %s: %s — `%s`", p.name(), strings.Join(by[m], ", "), m))
		}
	}
	if len(lines) > 0 {
		fmt.Println()
		fmt.Println("First bugs, by row:")
		fmt.Println()
		for _, l := range lines {
			fmt.Println(l)
		}
	}
	return failed
}

// printComparison prints the 2-CPU / 1-CPU wall-time ratios: of the
// whole evaluation, of its Quicksand and control phases, and per
// configuration over the cells that ended before their budget under both.
func printComparison(one, two *evaluation, budget time.Duration, block int) {
	fmt.Printf("\n#### 2 CPUs against 1\n\n")
	fmt.Printf("The two passes alternate by blocks of %d rows (1 CPU then 2, then 2 then 1, ...), so that the machine's drift "+
		"weighs on both; the hypervisor stole %s of the CPUs' time during the 1-CPU cells and %s during the 2-CPU ones.\n\n",
		block, percent(one.steal), percent(two.steal))
	fmt.Println("| cells | wall, 1 CPU | wall, 2 CPUs | ratio |")
	fmt.Println("|---|---:|---:|---:|")
	fmt.Printf("| **the whole evaluation** | %s | %s | **%s** |\n", one.wall().Round(time.Second), two.wall().Round(time.Second), ratio(two.wall(), one.wall()))
	if hasConfiguration(false) {
		fmt.Printf("| Quicksand (QS-LHB, QS-PHB), `-c 1` / `-c 2` | %s | %s | %s |\n", one.qsWall.Round(time.Second), two.qsWall.Round(time.Second), ratio(two.qsWall, one.qsWall))
	}
	if hasConfiguration(true) {
		fmt.Printf("| controls, one / two at once | %s | %s | %s |\n", one.ctlWall.Round(time.Second), two.ctlWall.Round(time.Second), ratio(two.ctlWall, one.ctlWall))
	}
	fmt.Printf("\nA cell that runs out of its %s of CPU time takes half as long on two CPUs by construction; "+
		"the cells that ended before their budget (a bug, a total verification, or every state space complete) "+
		"under both CPU counts show the speed-up itself:\n\n", budget)
	fmt.Println("| configuration | cells ended under both | of all | wall, 1 CPU | wall, 2 CPUs | ratio |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for k, cfg := range configurations {
		var s1, s2 time.Duration
		n := 0
		for i := range one.cells {
			a, b := &one.cells[i][k], &two.cells[i][k]
			if a.ended() && b.ended() {
				s1 += a.wall
				s2 += b.wall
				n++
			}
		}
		fmt.Printf("| %s | %d | %d | %s | %s | %s |\n", cfg.name, n, len(one.cells), s1.Round(100*time.Millisecond), s2.Round(100*time.Millisecond), ratio(s2, s1))
	}
	fmt.Println("\n(A control cell's own wall time does not shrink with two CPUs: two of them run at once instead.)")
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", a.Seconds()/b.Seconds())
}

// isSet reports whether the named flag was given.
func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// loadAverage is the 1-minute load average, or "?" off Linux.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func count(progs []*program) (libs, tests int) {
	l, t := map[string]bool{}, map[string]bool{}
	for _, p := range progs {
		l[p.lib], t[p.test] = true, true
	}
	return len(l), len(t)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// cpuStat is the first line of /proc/stat: the machine's CPU time so far,
// in clock ticks, as a whole and stolen (a virtual machine's CPUs waiting
// for the hypervisor).
type cpuStat struct{ total, steal int64 }

func readCPUStat() cpuStat {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuStat{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuStat{}
	}
	var st cpuStat
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		var n int64
		fmt.Sscan(v, &n)
		st.total += n
		if i == 7 {
			st.steal = n
		}
	}
	return st
}

// share is the stolen share of the CPU time st counts, -1 if unknown.
func (st cpuStat) share() float64 {
	if st.total <= 0 {
		return -1
	}
	return float64(st.steal) / float64(st.total)
}

func percent(f float64) string {
	if f < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}
