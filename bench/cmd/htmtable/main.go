// Command htmtable regenerates the Table 6.2 analogue of BENCHMARKS.md:
// the size of the maximal state space (Quicksand's -M, every data-race
// PP it finds, the interleaving clock) of each transactional-memory test
// of fixtures/src/htm at the sizes the thesis lists, under the baseline
// (RETRY aborts), retry sets (-R) and STM (-A -S), beside the thesis's
// figures, and under optimal DPOR (--strategy optimal) in the baseline's
// mode, which the thesis did not have.
//
//	go run ./bench/cmd/htmtable -limit 10m > /tmp/htmtable.md
//
// Each cell runs until its state space completes, the interleaving
// budget is spent, or -limit of wall time passes (then it shows "> N",
// the interleavings explored). Progress goes to stderr.
//
// With -bugs it prints the Table 6.1 analogue instead: the CPU time to
// the first bug of htm1, swapbug, avl_insert and lock_fast(spinlock) (all
// jobs) and the interleavings the buggy job explored, as the thesis
// counts them, under Quicksand (one worker, the interleaving clock) and
// under -M.
//
//	go run ./bench/cmd/htmtable -bugs -limit 5m > /tmp/htmbugs.md
//
// -only restricts any table to the rows whose test(K,N) contains a
// string (-only 'htm1(' for htm1's rows). -landslide runs the baseline,
// retry sets and STM under the thesis's own DPOR (Landslide's sleep-set
// check, dpor.Spec.LandslideSleepSets), as the tables before 2026-11-26
// were.
//
// With -abstraction it prints the Table 6.4 analogue: the lock tests
// over the three locks and the data structures over a plain mutex, in
// STM mode.
//
//	go run ./bench/cmd/htmtable -abstraction > /tmp/htmlocks.md
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"landslide/check"
	"landslide/fixtures"
	"landslide/quicksand"
)

// row is one test and size with the thesis's Table 6.2 sizes (baseline,
// retry sets, STM; "" where the thesis has none or an estimate).
type row struct {
	test   string
	k, n   int
	thesis [3]string
}

// stmBugTests run in STM mode (-A -S) for Table 6.1, as the thesis ran
// lock_fast: its lock's retry loop would make RETRY aborts fail the test
// trivially.
var stmBugTests = map[string]bool{"lock_fast_spinlock": true}

var rows = []row{
	{"htm2", 2, 1, [3]string{"22", "15", "4"}},
	{"htm2", 2, 2, [3]string{"1446", "334", "286"}},
	{"htm2", 2, 3, [3]string{"86536", "6366", "24740"}},
	{"htm2", 3, 1, [3]string{"774", "224", "140"}},
	{"htm2", 4, 1, [3]string{"212146", "11973", "44995"}},
	{"counter", 2, 1, [3]string{"10", "8", "4"}},
	{"counter", 2, 2, [3]string{"190", "102", "48"}},
	{"counter", 2, 4, [3]string{"86950", "25398", "19128"}},
	{"counter", 3, 2, [3]string{"60606", "44862", "14304"}},
	{"counter", 4, 1, [3]string{"3006", "1296", "848"}},
	{"swap", 2, 1, [3]string{"99", "59", "4"}},
	{"swap", 2, 2, [3]string{"277824", "19542", "11600"}},
	{"swap", 3, 1, [3]string{"60912", "10706", "1014"}},
	{"fig63", 2, 1, [3]string{"10", "6", "1"}},
	{"fig63", 2, 4, [3]string{"36600", "14512", "1"}},
	{"fig63", 4, 1, [3]string{"3064", "130", "1"}},
	{"avl_insert", 2, 1, [3]string{"15125", "6287", "2774"}},
	{"avl_fixed", 2, 1, [3]string{"20459", "9675", "2774"}},
	{"map_basic", 2, 1, [3]string{"30719", "13237", "5446"}},
	{"map_basicer", 2, 1, [3]string{"150", "94", "9"}},
	{"map_basicer", 2, 2, [3]string{"", "283756", "21684"}},
	{"map_basicer", 3, 1, [3]string{"", "366030", "12707"}},
}

// abstractionRows are Table 6.4's: the lock tests over each lock and the
// data structures over a plain mutex, with the thesis's sizes (first
// column; STM mode for the lock tests, whose retry loops RETRY aborts
// would make infinite).
var abstractionRows = []row{
	{"lock_spinlock", 2, 2, [3]string{"1702"}},
	{"lock_spin_fixed", 2, 2, [3]string{"998"}},
	{"lock_mutex", 2, 2, [3]string{""}},
	{"lock_mutex", 2, 4, [3]string{"489480"}},
	{"lock_mutex", 4, 1, [3]string{"15064"}},
	{"avl_mutex", 2, 5, [3]string{"76787"}},
	{"avl_mutex", 3, 2, [3]string{"30653"}},
	{"avl_mutex", 4, 1, [3]string{"4488"}},
	{"map_basicer_mutex", 2, 3, [3]string{"244691"}},
	{"map_basicer_mutex", 3, 1, [3]string{"12707"}},
}

func main() {
	limit := flag.Duration("limit", 10*time.Minute, "wall time of one cell")
	budget := flag.Int("budget", 0, "interleavings of one cell (Quicksand's --interleaving-budget; 0: 10M for the state spaces, 3M with -bugs)")
	bugs := flag.Bool("bugs", false, "time to the first bug (Table 6.1) instead of state-space sizes")
	abstraction := flag.Bool("abstraction", false, "the lock tests and the mutex-abstracted data structures (Table 6.4) instead")
	only := flag.String("only", "", "run only the rows whose test(K,N) contains this string")
	landslide := flag.Bool("landslide", false, "the thesis's DPOR: Landslide's sleep-set check (dpor.Spec.LandslideSleepSets) instead of sleep sets, in every mode but optimal DPOR")
	flag.Parse()
	rows = filter(rows, *only)
	bugRows = filter(bugRows, *only)
	abstractionRows = filter(abstractionRows, *only)
	if *budget == 0 {
		*budget = 10_000_000
		if *bugs {
			*budget = bugBudget
		}
	}
	if *bugs {
		bugTable(*budget, *limit)
		return
	}
	if *abstraction {
		abstractionTable(*budget, *limit)
		return
	}
	modes := []struct {
		name string
		spec check.Spec
	}{{"baseline", check.Spec{}}, {"retry sets", check.Spec{}}, {"STM", check.Spec{}}, {"optimal", check.Spec{}}}
	modes[1].spec.RetrySets = true
	modes[2].spec.AbortCodes, modes[2].spec.STM = true, true
	modes[3].spec.Strategy = "optimal" // the baseline's RETRY aborts
	if *landslide {
		for i := range modes[:3] {
			modes[i].spec.LandslideSleepSets = true
		}
	}

	fmt.Println("| test (K,N) | baseline | thesis | retry sets (-R) | thesis | STM (-A -S) | thesis | optimal DPOR |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		line := fmt.Sprintf("| %s(%d,%d)", r.test, r.k, r.n)
		for i, m := range modes {
			got, err := cell(r, m.spec, *budget, *limit)
			if err != nil {
				fmt.Fprintf(os.Stderr, "htmtable: %s(%d,%d) %s: %v\n", r.test, r.k, r.n, m.name, err)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "htmtable: %s(%d,%d) %s: %s\n", r.test, r.k, r.n, m.name, got)
			if i < len(r.thesis) {
				line += fmt.Sprintf(" | %s | %s", got, r.thesis[i])
			} else {
				line += " | " + got // no thesis figure: the thesis has no optimal DPOR
			}
		}
		fmt.Println(line + " |")
	}
}

// filter keeps the rows whose name test(K,N) contains s.
func filter(rs []row, s string) []row {
	var out []row
	for _, r := range rs {
		if strings.Contains(fmt.Sprintf("%s(%d,%d)", r.test, r.k, r.n), s) {
			out = append(out, r)
		}
	}
	return out
}

// spec is the row's program, at its size, with mode's options, and its
// image.
func (r row) spec(mode check.Spec) (check.Spec, []byte, error) {
	f, ok := fixtures.Lookup("htm/" + r.test)
	if !ok {
		return mode, nil, fmt.Errorf("no fixture htm/%s", r.test)
	}
	image, err := os.ReadFile(f.Path())
	if err != nil {
		return mode, nil, err
	}
	pps, err := check.ResolvePPs(image, check.PPRequest{Args: []string{f.Path(), fmt.Sprint(r.k), fmt.Sprint(r.n)}})
	if err != nil {
		return mode, nil, err
	}
	mode.Program, mode.Kernel = f.Path(), pps.Kernel
	return mode, image, nil
}

// quicksand runs Quicksand on the row's program in mode with opt, for
// at most limit of wall time.
func (r row) quicksand(mode check.Spec, opt quicksand.Options, limit time.Duration) (*check.QuicksandResult, error) {
	base, image, err := r.spec(mode)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	return check.Quicksand(ctx, check.QuicksandSpec{Base: base, Options: opt}, image, check.Recording{}, check.QuicksandHooks{})
}

// cell is the maximal state space's size, "> N" when it did not
// complete within the budget or the time limit, or "bug (N)" when a job
// found a bug after N interleavings.
func cell(r row, mode check.Spec, budget int, limit time.Duration) (string, error) {
	res, err := r.quicksand(mode, quicksand.Options{Budget: time.Duration(budget), Deterministic: true, Maximal: true}, limit)
	if err != nil {
		return "", err
	}
	last := res.Sched.Jobs[len(res.Sched.Jobs)-1]
	if len(res.Bugs) > 0 {
		b := res.Bugs[0]
		return fmt.Sprintf("bug (%d)", res.Sched.Jobs[b.Job-1].Interleavings), nil
	}
	if last.Status != quicksand.Complete {
		return fmt.Sprintf("> %d", last.Interleavings), nil
	}
	if res.Verdict.Outcome != check.Verified {
		return "", fmt.Errorf("complete but not verified: %s", res.Verdict.Message)
	}
	return fmt.Sprint(last.Interleavings), nil
}

func abstractionTable(budget int, limit time.Duration) {
	stm := check.Spec{}
	stm.AbortCodes, stm.STM = true, true
	fmt.Println("| test (K,N) | STM (-A -S) | thesis |")
	fmt.Println("|---|---:|---:|")
	for _, r := range abstractionRows {
		got, err := cell(r, stm, budget, limit)
		if err != nil {
			fmt.Fprintf(os.Stderr, "htmtable: %s(%d,%d): %v\n", r.test, r.k, r.n, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "htmtable: %s(%d,%d): %s\n", r.test, r.k, r.n, got)
		fmt.Printf("| %s(%d,%d) | %s | %s |\n", r.test, r.k, r.n, got, r.thesis[0])
	}
}

// bugRows are Table 6.1's tests with the thesis's Quicksand and -M
// interleavings to the bug.
var bugRows = []row{
	{"htm1", 2, 1, [3]string{"5", "5"}},
	{"htm1", 2, 4, [3]string{"33", "33"}},
	{"htm1", 3, 4, [3]string{"33", "33"}},
	{"htm1", 4, 2, [3]string{"9", "9"}},
	{"swapbug", 2, 1, [3]string{"6", "33"}},
	{"swapbug", 2, 4, [3]string{"34", "537"}},
	{"swapbug", 3, 1, [3]string{"32", "1016"}},
	{"swapbug", 3, 2, [3]string{"262", "> 1 h"}},
	{"avl_insert", 2, 2, [3]string{"29", "79"}},
	{"avl_insert", 2, 3, [3]string{"33", "835"}},
	{"avl_insert", 2, 4, [3]string{"1457", "> 1 h"}},
	{"avl_insert", 3, 1, [3]string{"14", "24"}},
	{"avl_insert", 3, 2, [3]string{"145", "> 1 h"}},
	{"lock_fast_spinlock", 2, 1, [3]string{"2", "2"}},
	{"lock_fast_spinlock", 9, 9, [3]string{"2", "2"}},
}

// bugBudget is a first-bug cell's default budget: about as many
// interleavings as one core explores here in the 3 to 4 minutes the
// cell's wall clock allows. Quicksand suspends the jobs whose ETA
// exceeds twice the budget left; with a budget far beyond the wall
// clock, a job expected to finish keeps the only worker until the clock
// stops the cell, and the jobs behind it never run.
const bugBudget = 3_000_000

func bugTable(budget int, limit time.Duration) {
	fmt.Println("| test (K,N) | Quicksand: CPU, buggy job's interleavings (all jobs') | thesis | -M: CPU, interleavings | thesis |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, r := range bugRows {
		line := fmt.Sprintf("| %s(%d,%d)", r.test, r.k, r.n)
		for i, maximal := range []bool{false, true} {
			got, err := firstBug(r, maximal, budget, limit)
			if err != nil {
				fmt.Fprintf(os.Stderr, "htmtable: %s(%d,%d): %v\n", r.test, r.k, r.n, err)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "htmtable: %s(%d,%d) maximal %v: %s\n", r.test, r.k, r.n, maximal, got)
			if i < len(r.thesis) {
				line += fmt.Sprintf(" | %s | %s", got, r.thesis[i])
			} else {
				line += " | " + got // no thesis figure: the thesis has no optimal DPOR
			}
		}
		fmt.Println(line + " |")
	}
}

// firstBug runs Quicksand (or -M) to the first bug: its CPU time and the
// interleavings of all its jobs.
func firstBug(r row, maximal bool, budget int, limit time.Duration) (string, error) {
	mode := check.Spec{}
	mode.AbortCodes, mode.STM = stmBugTests[r.test], stmBugTests[r.test]
	res, err := r.quicksand(mode, quicksand.Options{Budget: time.Duration(budget), Deterministic: true, Maximal: maximal, FirstBug: true}, limit)
	if err != nil {
		return "", err
	}
	if len(res.Bugs) == 0 {
		return fmt.Sprintf("no bug in %.0f s (%d)", res.CPU.Seconds(), int64(res.Sched.Now)), nil
	}
	b := res.Bugs[0]
	n := res.Sched.Jobs[b.Job-1].Interleavings
	if maximal {
		return fmt.Sprintf("%.1f s, %d", res.CPU.Seconds(), n), nil
	}
	return fmt.Sprintf("%.1f s, %d (%d)", res.CPU.Seconds(), n, int64(b.FoundAt)), nil
}
