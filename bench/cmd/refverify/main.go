// Command refverify runs check.Explore, the library under `landslide
// explore PROGRAM --pp mutex_lock,mutex_unlock`, with the command's
// default budget and a store, on every test program built against the reference
// thread library that is expected to pass, and prints a Markdown table:
// whether each state space completed with no bug (verified), in how many
// interleavings, with which PP set, and how long it took. It is the
// evidence for the exploration issue's "the reference library verifies on
// each shipped test within the default budget" (BENCHMARKS.md,
// "Reference verification").
//
//	go run ./bench/cmd/refverify -j 2 > /tmp/refverify.md
//
// Each exploration runs in this process with a store in a temporary
// directory; -j runs that many at once. Progress goes to stderr. The exit
// status is 1 if any test did not verify.
//
// The strategy is explore's default (optimal DPOR, falling back to the
// dpor strategy where it is not exact), or -strategy's. The table gives
// each exploration's executions and distinct Mazurkiewicz traces, and
// their ratio: the redundancy the exploration issue bounds. -all takes
// every fixture expected to pass (POSIX, C11, spin-loop and small
// programs too, under explore's default PP set: the mutex calls, or a
// POSIX program's pthread calls) instead of the reference tests, and
// -budget caps each:
//
//	go run ./bench/cmd/refverify -all -budget 5m > /tmp/redundancy.md
//	go run ./bench/cmd/refverify -all -budget 5m -strategy dpor > /tmp/redundancy-dpor.md
//
// With -quicksand it checks Quicksand's total verification instead (the
// Quicksand issue: "a correct library is totally verified on mutex_test
// and paradise_lost with both --hb modes"): check.Quicksand as `landslide
// quicksand fixtures/bin/ref/TEST.elf --hb H -c C --budget B --no-store`
// runs it, for each test of -tests and each mode of -hb, one after the
// other:
//
//	go run ./bench/cmd/refverify -quicksand -tests mutex_test,paradise_lost -c 2 -budget 30m
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"landslide/check"
	"landslide/fixtures"
	"landslide/quicksand"
	"landslide/store"
)

// outcome is one test's exploration.
type outcome struct {
	name          string
	verified      bool
	message       string
	interleavings int
	executed      int
	traces        int
	tracesAtLeast bool
	fallback      string
	ppSet         []string
	wall          time.Duration
	err           string
}

func main() {
	jobs := flag.Int("j", 1, "explorations run at once")
	only := flag.String("only", "", "only tests whose name contains this")
	strategy := flag.String("strategy", "", "the strategy (default: explore's, optimal DPOR with its fallback to dpor)")
	all := flag.Bool("all", false, "every fixture expected to pass, not only the reference tests")
	qs := flag.Bool("quicksand", false, "check Quicksand's total verification instead (see the package comment)")
	qsTests := flag.String("tests", "mutex_test,paradise_lost", "with -quicksand: the reference tests")
	qsHB := flag.String("hb", "limited,pure", "with -quicksand: the data-race analyses")
	qsCPUs := flag.Int("c", 2, "with -quicksand: workers")
	budget := flag.Duration("budget", check.DefaultExploreBudget, "each exploration's budget, or with -quicksand each run's")
	flag.Parse()
	if *jobs < 1 {
		fmt.Fprintln(os.Stderr, "refverify: -j must be at least 1")
		os.Exit(2)
	}
	if err := os.Chdir(fixtures.Root()); err != nil {
		fmt.Fprintln(os.Stderr, "refverify:", err)
		os.Exit(2)
	}
	if *qs {
		os.Exit(quicksandTable(strings.Split(*qsTests, ","), strings.Split(*qsHB, ","), *qsCPUs, *budget))
	}
	var tests []fixtures.Fixture
	for _, f := range fixtures.All() {
		ok := f.Lib == "ref" && f.Expect == "ok" && strings.HasPrefix(f.Name, "ref/")
		if *all {
			ok = f.Expect == "ok" && !f.NoLibc
		}
		if ok && strings.Contains(f.Name, *only) {
			tests = append(tests, f)
		}
	}
	tmp, err := os.MkdirTemp("", "refverify")
	if err != nil {
		fmt.Fprintln(os.Stderr, "refverify:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(tmp)

	start := time.Now()
	out := make([]outcome, len(tests))
	sem := make(chan struct{}, *jobs)
	var wg sync.WaitGroup
	for i, f := range tests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = explore(f, fmt.Sprintf("%s/store%d", tmp, i), *strategy, *budget, *all)
			o := out[i]
			fmt.Fprintf(os.Stderr, "refverify: %s: %s, %d interleavings, %s\n", f.Name, o.message, o.interleavings, o.wall.Round(time.Second))
		}()
	}
	wg.Wait()

	failed := false
	fmt.Printf("`go run ./bench/cmd/refverify %s` at %s on %s/%s, %d CPUs; each row is\n", strings.Join(os.Args[1:], " "), time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	strat := ""
	if *strategy != "" {
		strat = " --strategy " + *strategy
	}
	pp := " --pp mutex_lock,mutex_unlock"
	if *all {
		pp = "" // the default PP set
	}
	fmt.Printf("`landslide explore fixtures/bin/TEST.elf%s%s --budget %s`; %s wall time in all.\n\n", pp, strat, *budget, time.Since(start).Round(time.Second))
	fmt.Println("| test | result | interleavings | executions | traces | executions ÷ traces | fallback | wall time | PP set |")
	fmt.Println("|---|---|---:|---:|---:|---:|---|---:|---|")
	for _, o := range out {
		res := o.message
		switch {
		case o.err != "":
			failed, res = true, "error: "+o.err
		case o.verified:
			res = "**verified**"
		default:
			failed = true
		}
		ratio, traces := "", fmt.Sprint(o.traces)
		if o.traces > 0 {
			ratio = fmt.Sprintf("%.2f", float64(o.executed)/float64(o.traces))
		}
		if o.tracesAtLeast {
			traces = "≥ " + traces
		}
		fb := ""
		if o.fallback != "" {
			fb = "dpor: " + strings.SplitN(o.fallback, ":", 2)[0]
			if i := strings.Index(fb, ", which"); i > 0 {
				fb = fb[:i]
			}
		}
		fmt.Printf("| %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", o.name, res, o.interleavings, o.executed, traces, ratio, fb, o.wall.Round(100*time.Millisecond), strings.Join(o.ppSet, ", "))
	}
	if failed {
		os.Exit(1)
	}
}

// explore runs one exploration in a new store in dir: the PP set of
// `--pp mutex_lock,mutex_unlock` resolved against the program (its own
// directives included), explore's default budget.
func explore(f fixtures.Fixture, dir, strategy string, budget time.Duration, defaultPPs bool) outcome {
	o := outcome{name: f.Name}
	t0 := time.Now()
	res, err := exploreTest(f.Output, dir, strategy, budget, defaultPPs)
	o.wall = time.Since(t0)
	if err != nil {
		o.err = err.Error()
		return o
	}
	o.verified, o.message = res.Verdict.Outcome == check.Verified, res.Verdict.Message
	o.interleavings, o.ppSet = res.Interleavings, res.PPSet
	o.executed, o.traces, o.tracesAtLeast, o.fallback = res.Executed, res.Traces, res.TracesAtLeast, res.Fallback
	return o
}

func exploreTest(path, dir, strategy string, budget time.Duration, defaultPPs bool) (*check.ExploreResult, error) {
	image, err := check.LoadELF(path)
	if err != nil {
		return nil, err
	}
	req := check.PPRequest{PPs: []string{"mutex_lock", "mutex_unlock"}, Args: []string{path}}
	if defaultPPs {
		req.PPs = nil // explore's default: the mutex calls, or a POSIX program's pthread calls
	}
	pps, err := check.ResolvePPs(image, req)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	spec := check.Spec{Program: path, Kernel: pps.Kernel, HB: check.Limited, TestingMutexes: pps.TestingMutexes, Budget: budget}
	spec.Strategy = strategy
	if strategy == "" { // explore's default
		spec.Strategy, spec.Fallback = check.DefaultStrategy, true
	}
	return check.Explore(context.Background(), check.Config{Spec: spec, Image: image}, check.Recording{Store: st})
}

// quicksandTable runs Quicksand on each test under each mode and prints
// whether it totally verified; it returns the exit status.
func quicksandTable(tests, modes []string, cpus int, budget time.Duration) int {
	fmt.Printf("`go run ./bench/cmd/refverify -quicksand -tests %s -hb %s -c %d -budget %s` at %s on %s/%s, %d CPUs; each row is\n",
		strings.Join(tests, ","), strings.Join(modes, ","), cpus, budget, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Printf("`landslide quicksand fixtures/bin/ref/TEST.elf --hb HB -c %d --budget %s --no-store`.\n\n", cpus, budget)
	fmt.Println("| test | --hb | result | jobs (complete) | data-race PPs in the maximal set | wall time | CPU time | core saturation |")
	fmt.Println("|---|---|---|---:|---:|---:|---:|---:|")
	status := 0
	for _, test := range tests {
		f, ok := fixtures.Lookup("ref/" + test)
		if !ok {
			fmt.Fprintf(os.Stderr, "refverify: no fixture ref/%s\n", test)
			return 2
		}
		for _, hb := range modes {
			mode, err := check.ParseHB(hb)
			if err != nil {
				fmt.Fprintf(os.Stderr, "refverify: -hb: %v\n", err)
				return 2
			}
			t0 := time.Now()
			res, err := quicksandTest(f.Output, mode, cpus, budget)
			wall := time.Since(t0)
			if err != nil {
				fmt.Printf("| %s | %s | error: %s | | | | | |\n", test, hb, err)
				status = 1
				continue
			}
			complete, maxRaces := 0, 0
			for _, j := range res.Sched.Jobs {
				if j.Status == quicksand.Complete {
					complete++
					maxRaces = max(maxRaces, strings.Count(res.Sched.Reg.Describe(j.Set), "data race at 0x"))
				}
			}
			verdict := res.Verdict.Message
			if res.Verdict.Outcome == check.Verified {
				verdict = "**total verification**"
			} else {
				status = 1
			}
			fmt.Printf("| %s | %s | %s | %d (%d) | %d | %s | %.0fs | %.0f%% |\n", test, hb, verdict, len(res.Sched.Jobs), complete, maxRaces,
				wall.Round(time.Second), res.CPU.Seconds(), 100*res.Saturation)
			fmt.Fprintf(os.Stderr, "refverify: quicksand %s --hb %s: %s in %s\n", test, hb, res.Verdict.Outcome, wall.Round(time.Second))
		}
	}
	return status
}

// quicksandTest runs Quicksand on the program without a store, its PP
// set resolved as quicksand's flags would (the default sync PPs and the
// program's own directives).
func quicksandTest(path string, mode check.HB, cpus int, budget time.Duration) (*check.QuicksandResult, error) {
	image, err := check.LoadELF(path)
	if err != nil {
		return nil, err
	}
	pps, err := check.ResolvePPs(image, check.PPRequest{Args: []string{path}})
	if err != nil {
		return nil, err
	}
	spec := check.QuicksandSpec{
		Base:    check.Spec{Program: path, Kernel: pps.Kernel, HB: mode, TestingMutexes: pps.TestingMutexes},
		Options: quicksand.Options{Budget: budget, Workers: cpus}}
	return check.Quicksand(context.Background(), spec, image, check.Recording{}, check.QuicksandHooks{})
}
