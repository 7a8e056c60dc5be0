// Command lockfreetable regenerates the Fig. 6-1 analogue of
// BENCHMARKS.md (van den Hooff's CB-DPOR thesis, "test cases in which a
// bug was found"): every buggy lock-free fixture (fixtures/src/lockfree/)
// and test case, explored with --every-access and --linearizability
// under CB-DPOR, DPOR, CHESS (icb), CHESS-atomic and PCT of depth 3, 5
// and 7 (-seeds seeds each), each run with the same budget: whether the
// bug was found, and the time and executions to the first bug. Then each
// correct fixture's cases under exhaustive DPOR: verified linearizable,
// or the budget's coverage.
//
//	go run ./bench/cmd/lockfreetable > /tmp/lockfree.md   # about 13 minutes
//
// A PCT cell counts the seeds that found the bug within the budget:
// "guaranteed" when all did (the thesis asks 99% over many runs; with 20
// seeds, all 20), and the expected number of cases found is the sum of
// the fractions. The cases CB-DPOR does not find within -budget (the
// tagged FIFO's five-thread case 0: about 150,000 executions) are run
// again with -long-budget, in a second table. Progress goes to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"landslide/check"
	"landslide/fixtures"
)

// tcase is a fixture and a test case (its argv[1]).
type tcase struct {
	fixture string
	arg     string
}

func (c tcase) String() string {
	return strings.TrimPrefix(c.fixture, "lockfree/") + " " + c.arg
}

// buggy are the seeded-bug fixtures' test cases that expose their bug
// (fixtures.LockfreeBugCases; for the tagged FIFO also case 0, the
// thesis's five threads), correct the fixed versions' cases (see
// fixtures/lockfree.go and each source's comment).
var buggy, correct []tcase

func init() {
	for _, f := range fixtures.All() {
		if !strings.HasPrefix(f.Name, "lockfree/") {
			continue
		}
		if arg, ok := fixtures.LockfreeBugCases[f.Name]; ok {
			if slices.Contains(fixtures.LockfreeCases(f.Name), "0") {
				buggy = append(buggy, tcase{f.Name, "0"})
			}
			buggy = append(buggy, tcase{f.Name, arg})
			continue
		}
		for _, arg := range fixtures.LockfreeCases(f.Name) {
			correct = append(correct, tcase{f.Name, arg})
		}
	}
}

// strategy is a column: a strategy and its parameters.
type strategy struct {
	name, strategy string
	depth          int
}

var deterministic = []strategy{
	{"CB-DPOR", "cbdpor", 0},
	{"DPOR", "dpor", 0},
	{"CHESS", "icb", 0},
	{"CHESS-atomic", "chess-atomic", 0},
}

var pct = []strategy{{"PCT 3", "pct", 3}, {"PCT 5", "pct", 5}, {"PCT 7", "pct", 7}}

// outcome is one run's.
type outcome struct {
	found    bool
	verified bool
	elapsed  time.Duration
	executed int
	cover    float64
	stopped  string
}

func run(c tcase, st strategy, seed uint64, budget time.Duration) (outcome, error) {
	f, ok := fixtures.Lookup(c.fixture)
	if !ok {
		return outcome{}, fmt.Errorf("no fixture %s", c.fixture)
	}
	image, err := os.ReadFile(f.Path())
	if err != nil {
		return outcome{}, err
	}
	pps, err := check.ResolvePPs(image, check.PPRequest{EveryAccess: true, Args: []string{f.Output, c.arg}})
	if err != nil {
		return outcome{}, err
	}
	spec := check.Spec{Program: f.Output, Kernel: pps.Kernel, Budget: budget, Linearizability: true}
	spec.Strategy, spec.Seed, spec.Depth = st.strategy, seed, st.depth
	res, err := check.Explore(context.Background(), check.Config{Spec: spec, Image: image}, check.Recording{})
	if err != nil {
		return outcome{}, fmt.Errorf("%s, %s: %w", c, st.name, err)
	}
	o := outcome{found: res.Bug != nil, verified: res.Verified, elapsed: res.Elapsed, executed: res.Executed,
		cover: res.Estimate.Proportion, stopped: res.Stopped.String()}
	if res.Bug != nil && res.Bug.Kind.String() != "linearizability" && res.Bug.Kind.String() != "assert" {
		fmt.Fprintf(os.Stderr, "lockfreetable: %s, %s: a %s bug: %s\n", c, st.name, res.Bug.Kind, res.Bug.Message)
	}
	return o, nil
}

// tally counts a table's cases found per strategy.
type tally struct {
	n          int
	found      map[string]int
	guaranteed map[string]int
	expected   map[string]float64
}

func newTally() *tally {
	return &tally{found: map[string]int{}, guaranteed: map[string]int{}, expected: map[string]float64{}}
}

func header() {
	head := "| case |"
	line := "|---|"
	for _, s := range append(deterministic, pct...) {
		head += " " + s.name + " |"
		line += "---|"
	}
	fmt.Println(head)
	fmt.Println(line)
}

// row runs case c under every strategy with the budget (PCT: seeds runs
// each) and prints its row; cbdpor: CB-DPOR found the bug.
func (t *tally) row(c tcase, budget time.Duration, seeds int) (cbdpor bool, err error) {
	t.n++
	row := "| " + c.String() + " |"
	for _, s := range deterministic {
		o, err := run(c, s, 0, budget)
		if err != nil {
			return false, err
		}
		if o.found {
			t.found[s.name]++
			cbdpor = cbdpor || s.strategy == "cbdpor"
			row += fmt.Sprintf(" %.2f s, %d |", o.elapsed.Seconds(), o.executed)
		} else {
			row += fmt.Sprintf(" — (%s, %d) |", o.stopped, o.executed)
		}
	}
	for _, s := range pct {
		k := 0
		var el time.Duration
		execs := 0
		for seed := 1; seed <= seeds; seed++ {
			o, err := run(c, s, uint64(seed), budget)
			if err != nil {
				return false, err
			}
			if o.found {
				k++
				el += o.elapsed
				execs += o.executed
			}
		}
		t.expected[s.name] += float64(k) / float64(seeds)
		if k == seeds {
			t.guaranteed[s.name]++
		}
		if k > 0 {
			row += fmt.Sprintf(" %d/%d: %.2f s, %d |", k, seeds, el.Seconds()/float64(k), execs/k)
		} else {
			row += fmt.Sprintf(" 0/%d |", seeds)
		}
	}
	fmt.Println(row)
	fmt.Fprintf(os.Stderr, "lockfreetable: %s done\n", c)
	return cbdpor, nil
}

func (t *tally) total() {
	total := "| **found** |"
	for _, s := range deterministic {
		total += fmt.Sprintf(" **%d/%d** |", t.found[s.name], t.n)
	}
	for _, s := range pct {
		total += fmt.Sprintf(" **%d/%d** guaranteed, %.2f expected |", t.guaranteed[s.name], t.n, t.expected[s.name])
	}
	fmt.Println(total)
}

func main() {
	budget := flag.Duration("budget", 3*time.Second, "CPU budget of each run (a PCT cell runs -seeds of them)")
	seeds := flag.Int("seeds", 20, "PCT runs per cell (seeds 1..N)")
	longBudget := flag.Duration("long-budget", 40*time.Second, "budget of each run of the cases CB-DPOR did not find within -budget (0: none)")
	longSeeds := flag.Int("long-seeds", 3, "PCT runs per cell with -long-budget")
	verifyBudget := flag.Duration("verify-budget", 20*time.Second, "budget of each correct case's exhaustive DPOR run")
	only := flag.String("only", "", "only the cases whose name contains this")
	flag.Parse()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "lockfreetable:", err)
		os.Exit(2)
	}

	fmt.Printf("Buggy cases, budget %s per run (PCT: %d seeds per cell, each with that budget). A cell: the time and executions to the first bug, or — (not found); PCT: the seeds that found it, and the mean time and executions of those.\n\n", *budget, *seeds)
	header()
	short := newTally()
	var missed []tcase
	for _, c := range buggy {
		if !strings.Contains(c.String(), *only) {
			continue
		}
		found, err := short.row(c, *budget, *seeds)
		if err != nil {
			fail(err)
		}
		if !found {
			missed = append(missed, c)
		}
	}
	short.total()

	if len(missed) > 0 && *longBudget > 0 {
		fmt.Printf("\nThe cases CB-DPOR did not find within %s, again with a budget of %s per run (PCT: %d seeds per cell):\n\n", *budget, *longBudget, *longSeeds)
		header()
		long := newTally()
		for _, c := range missed {
			if _, err := long.row(c, *longBudget, *longSeeds); err != nil {
				fail(err)
			}
		}
		long.total()
	}

	fmt.Printf("\nCorrect cases, exhaustive DPOR with a budget of %s each:\n\n", *verifyBudget)
	fmt.Println("| case | result | executions | time |")
	fmt.Println("|---|---|---:|---:|")
	for _, c := range correct {
		if !strings.Contains(c.String(), *only) {
			continue
		}
		o, err := run(c, strategy{"DPOR", "dpor", 0}, 0, *verifyBudget)
		if err != nil {
			fail(err)
		}
		what := "verified linearizable"
		switch {
		case o.found:
			what = "**a bug**"
		case !o.verified:
			what = fmt.Sprintf("budget: %.1f%% explored (estimate)", 100*o.cover)
		}
		fmt.Printf("| %s | %s | %d | %.2f s |\n", c, what, o.executed, o.elapsed.Seconds())
		fmt.Fprintf(os.Stderr, "lockfreetable: %s done\n", c)
	}
}
