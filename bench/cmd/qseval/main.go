// Command qseval is the thesis's Table 4.1 on our fixtures: every
// seeded-bug thread library (fixtures/src/lib/<lib>) built with every test
// program that passes against the reference library, each binary run by
// `landslide quicksand` (through the command line's own code) under five
// configurations with the same wall-clock budget:
//
//	QS-LHB  quicksand (Iterative Deepening, Limited Happens-Before)
//	QS-PHB  quicksand --hb pure
//	ICB     quicksand --control --icb
//	DPOR    quicksand --control
//	ShMem   quicksand --control --preempt-everywhere
//
// every one with --no-store --quiet --json --first-bug. It prints Markdown:
// one table with a row per library/test and a column per configuration
// ("bug 1.2s": the first bug and the wall clock to it, found_at;
// "verified 3.4s": total verification; "complete 0.5s": every state space
// completed with no bug but data-race candidates stayed uncovered, which
// is how --control ends on a racy program; "—": the budget ran out), the
// totals per configuration, and which bugs were found (BENCHMARKS.md,
// "Quicksand evaluation").
//
//	go run ./bench/cmd/qseval -budget 5s -j 2 > /tmp/qseval.md
//	go run ./bench/cmd/qseval -own -budget 20s -compare-workers > /tmp/qsworkers.md
//
// The tests are the reference tests expected to pass, but the thesis
// figures, race demonstrations and atomic-instruction tests (see skipped;
// -tests names any of them, "all" takes every one); -own keeps only each
// library's own fixture, the test shipped to expose its bug.
//
// The library × test binaries are built with the SDK into a temporary
// directory (removed at the end unless -keep), once per run. -compare-workers
// runs the whole evaluation twice, with -c 1 and -c 2, one cell at a time,
// and prints the ratio of their wall times; since the budget is wall clock,
// a cell that runs out of budget takes as long with two workers as with
// one, so it also prints the ratio over the cells that ended before their
// budget under both. Progress goes to stderr. The exit status is 2 if a
// binary did not build or a cell ended in an error, else 0.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"landslide/cli"
	"landslide/fixtures"
	"landslide/sdk"
)

// configuration is one column of the table: the quicksand flags it adds.
type configuration struct {
	name string
	args []string
}

var configurations = []configuration{
	{"QS-LHB", []string{"--hb", "limited"}},
	{"QS-PHB", []string{"--hb", "pure"}},
	{"ICB", []string{"--control", "--icb"}},
	{"DPOR", []string{"--control"}},
	{"ShMem", []string{"--control", "--preempt-everywhere"}},
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

// bug and doc are the parts of quicksand's --json document the table uses.
type bug struct {
	Job     int     `json:"job"`
	Message string  `json:"message"`
	FoundAt float64 `json:"found_at"`
	PPSet   string  `json:"pp_set"`
}

type doc struct {
	Result            string  `json:"result"`
	ExitCode          int     `json:"exit_code"`
	Bugs              []bug   `json:"bugs"`
	TotalVerification bool    `json:"total_verification"`
	Elapsed           float64 `json:"elapsed"`
	CPUSeconds        float64 `json:"cpu_seconds"`
	Saturation        float64 `json:"core_saturation"`
	Jobs              []struct {
		Status string `json:"status"`
	} `json:"jobs"`
}

// cell is one run: a program under a configuration.
type cell struct {
	code int
	doc  doc
	wall time.Duration
	err  string
}

// first is the cell's earliest bug.
func (c *cell) first() *bug {
	var b *bug
	for i := range c.doc.Bugs {
		if b == nil || c.doc.Bugs[i].FoundAt < b.FoundAt {
			b = &c.doc.Bugs[i]
		}
	}
	return b
}

// ended reports whether the cell ended before its budget (a bug, a total
// verification, or every state space complete).
func (c *cell) ended() bool {
	return c.err == "" && (c.code == cli.ExitBug || c.code == cli.ExitOK || c.complete())
}

// complete reports whether the budget "ran out" only in name: every state
// space completed with no bug, yet data-race candidates stayed uncovered
// (under --control races never become PPs), so there was no total
// verification and quicksand exits 3.
func (c *cell) complete() bool {
	if c.err != "" || c.code != cli.ExitBudget || len(c.doc.Jobs) == 0 {
		return false
	}
	for _, j := range c.doc.Jobs {
		switch j.Status {
		case "pending", "running", "suspended", "timed out":
			return false
		}
	}
	return true
}

func (c *cell) text() string {
	switch {
	case c.err != "":
		return "error: " + c.err
	case c.code == cli.ExitBug:
		if b := c.first(); b != nil {
			return fmt.Sprintf("bug %.1fs", b.FoundAt)
		}
		return "bug ?"
	case c.code == cli.ExitOK:
		return fmt.Sprintf("verified %.1fs", c.doc.Elapsed)
	case c.complete():
		return fmt.Sprintf("complete %.1fs", c.doc.Elapsed)
	case c.code == cli.ExitBudget:
		return "—"
	}
	return fmt.Sprintf("exit %d", c.code)
}

// evaluation is every cell of one pass: cells[program][configuration].
type evaluation struct {
	workers int
	cells   [][]cell
	wall    time.Duration
}

type options struct {
	budget  time.Duration
	workers int
	jobs    int
	tmp     string
}

func main() {
	budget := flag.Duration("budget", 20*time.Second, "wall-clock budget of each cell (quicksand --budget)")
	workers := flag.Int("c", 1, "quicksand workers per cell (quicksand -c)")
	libs := flag.String("libs", "", "comma-separated seeded-bug libraries to evaluate (default: all)")
	tests := flag.String("tests", "", "comma-separated reference tests to build with them (default: the passing tests but "+strings.Join(sortedKeys(skipped), ", ")+"; \"all\" for every passing test)")
	own := flag.Bool("own", false, "only each library's own fixture (the test shipped to expose its bug), not every library × test")
	jobs := flag.Int("j", 1, "cells run at once")
	compare := flag.Bool("compare-workers", false, "run the whole evaluation with -c 1 and with -c 2, one cell at a time (-j 1), and compare their wall times")
	keep := flag.Bool("keep", false, "keep the temporary directory of binaries and bug reports")
	flag.Parse()
	if *jobs < 1 || *workers < 1 || *budget <= 0 {
		fmt.Fprintln(os.Stderr, "qseval: -j and -c must be at least 1, -budget positive")
		os.Exit(2)
	}
	if *compare && (*jobs != 1 || *workers != 1) {
		fmt.Fprintln(os.Stderr, "qseval: -compare-workers runs one cell at a time with -c 1 then -c 2: drop -j and -c")
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
	if err != nil {
		fmt.Fprintln(os.Stderr, "qseval:", err)
		os.Exit(2)
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "qseval: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	start := time.Now()
	build(progs, tmp)
	buildTime := time.Since(start)
	opt := options{budget: *budget, workers: *workers, jobs: *jobs, tmp: tmp}

	var evals []*evaluation
	if *compare {
		for _, c := range []int{1, 2} {
			o := opt
			o.workers, o.jobs = c, 1
			evals = append(evals, evaluate(progs, o))
		}
	} else {
		evals = append(evals, evaluate(progs, opt))
	}

	fmt.Printf("`go run ./bench/cmd/qseval %s` at %s on %s/%s, %d CPUs (runtime.NumCPU).\n\n",
		strings.Join(os.Args[1:], " "), start.UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	nlibs, ntests := count(progs)
	rows := fmt.Sprintf("%d seeded-bug libraries × %d tests = %d binaries", nlibs, ntests, len(progs))
	if *own {
		rows = fmt.Sprintf("%d seeded-bug libraries, each with its own test: %d binaries", nlibs, len(progs))
	}
	fmt.Printf("%s (built in %s), × %d configurations, budget %s per cell, "+
		"each `landslide quicksand BINARY --no-store --quiet --json --first-bug --budget %s -c C` plus the configuration's flags "+
		"(QS-LHB `--hb limited`, QS-PHB `--hb pure`, ICB `--control --icb`, DPOR `--control`, ShMem `--control --preempt-everywhere`). "+
		"A cell is the first bug and the wall clock to it (found_at), a total verification and its time, "+
		"\"complete\" when every state space completed with no bug but data-race candidates stayed uncovered "+
		"(no total verification: under --control races never become PPs; quicksand exits 3 early), or — when the budget ran out. "+
		"A row marked * is the library's own fixture (the test shipped to expose its bug). %s wall time in all.\n",
		rows, buildTime.Round(time.Second), len(configurations), *budget, *budget, time.Since(start).Round(time.Second))

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
		printComparison(evals[0], evals[1], *budget)
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
// once as there are CPUs. The test's base name is kept: quicksand turns
// on testing mutexes for a program named mutex_test*.
func build(progs []*program, tmp string) {
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
			p.buildErr = sdk.Build(f.BuildOptions())
			if p.buildErr != nil {
				fmt.Fprintf(os.Stderr, "qseval: building %s: %v\n", p.name(), p.buildErr)
			}
		}()
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "qseval: built %d binaries in %s\n", len(progs), tmp)
}

// evaluate runs every cell. A program's five configurations run one after
// the other (so they see about the same load), up to o.jobs cells at once.
func evaluate(progs []*program, o options) *evaluation {
	e := &evaluation{workers: o.workers, cells: make([][]cell, len(progs))}
	for i := range e.cells {
		e.cells[i] = make([]cell, len(configurations))
	}
	type task struct{ i, k int }
	tasks := make(chan task)
	go func() {
		for i := range progs {
			for k := range configurations {
				tasks <- task{i, k}
			}
		}
		close(tasks)
	}()
	total := len(progs) * len(configurations)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	start := time.Now()
	for range o.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				p, cfg, c := progs[t.i], configurations[t.k], &e.cells[t.i][t.k]
				if p.buildErr != nil {
					c.err = "build failed"
				} else {
					dir := filepath.Join(o.tmp, fmt.Sprintf("traces-c%d", o.workers), cfg.name, p.lib, p.test)
					*c = run(p.path, cfg, o, dir)
				}
				mu.Lock()
				done++
				extra := ""
				if b := c.first(); b != nil {
					extra = fmt.Sprintf(" [%s] %s", b.PPSet, b.Message)
				}
				fmt.Fprintf(os.Stderr, "qseval: c=%d [%d/%d] %-6s %s: %s (wall %s)%s\n", o.workers, done, total, cfg.name, p.name(),
					c.text(), c.wall.Round(100*time.Millisecond), extra)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	e.wall = time.Since(start)
	return e
}

// run is one cell, through the command line as a user would run it.
func run(path string, cfg configuration, o options, traceDir string) cell {
	var stdout, stderr bytes.Buffer
	args := append([]string{"quicksand", path, "--no-store", "--quiet", "--json", "--first-bug",
		"--budget", o.budget.String(), "-c", fmt.Sprint(o.workers), "--trace-dir", traceDir}, cfg.args...)
	t0 := time.Now()
	code := cli.Main(args, &stdout, &stderr)
	c := cell{code: code, wall: time.Since(t0)}
	if err := json.Unmarshal(stdout.Bytes(), &c.doc); err != nil || code == cli.ExitUsage {
		c.err = strings.TrimSpace(stderr.String())
		if c.err == "" && err != nil {
			c.err = err.Error()
		}
		if c.err == "" {
			c.err = fmt.Sprintf("exit %d", code)
		}
		c.err = oneLine(c.err, 100)
	}
	return c
}

// printEvaluation prints one pass's table, totals and bugs; it reports
// whether a cell ended in an error.
func printEvaluation(progs []*program, e *evaluation, compare bool) bool {
	failed := false
	if compare {
		fmt.Printf("\n### With -c %d (%s wall time, cells one at a time)\n", e.workers, e.wall.Round(time.Second))
	} else {
		fmt.Printf("\nWith -c %d: %s wall time for the cells.\n", e.workers, e.wall.Round(time.Second))
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
			case c.code == cli.ExitBug:
				bugs++
				if p.shipped {
					own++
				}
			case c.code == cli.ExitOK:
				verified++
			case c.complete():
				complete++
			case c.code == cli.ExitBudget:
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

// printComparison prints the -c 2 / -c 1 wall-time ratios.
func printComparison(one, two *evaluation, budget time.Duration) {
	fmt.Printf("\n### -c 2 against -c 1\n\n")
	fmt.Printf("Whole evaluation (cells one at a time): %s with -c 1, %s with -c 2: **ratio %.2f**.\n",
		one.wall.Round(time.Second), two.wall.Round(time.Second), two.wall.Seconds()/one.wall.Seconds())
	fmt.Printf("The budget (%s) is wall clock, so a cell that runs out of it takes as long with two workers as with one. "+
		"Over the cells that ended before their budget (a bug, a total verification, or every state space complete) under both worker counts:\n\n", budget)
	fmt.Println("| configuration | cells ended under both | of all | wall, -c 1 | wall, -c 2 | ratio |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	var all1, all2 time.Duration
	allN, allCells := 0, 0
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
		all1, all2, allN, allCells = all1+s1, all2+s2, allN+n, allCells+len(one.cells)
		fmt.Printf("| %s | %d | %d | %s | %s | %s |\n", cfg.name, n, len(one.cells), s1.Round(100*time.Millisecond), s2.Round(100*time.Millisecond), ratio(s2, s1))
	}
	fmt.Printf("| all | %d | %d | %s | %s | %s |\n", allN, allCells, all1.Round(100*time.Millisecond), all2.Round(100*time.Millisecond), ratio(all2, all1))
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", a.Seconds()/b.Seconds())
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

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
