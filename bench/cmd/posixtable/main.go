// Command posixtable regenerates the trace-count table of BENCHMARKS.md:
// the benchmark families of the DPOR literature (fixtures/src/posix/,
// each size N its argv[1], and three of them written with the P2 API,
// fixtures/src/tests/*_thr.c) explored with every shared access a PP
// (--every-access), under optimal DPOR and under the default dpor
// strategy, beside the published counts (Nidhugg and GenMC, sequential
// consistency) or the count derived independently where none is
// published.
//
//	go run ./bench/cmd/posixtable -limit 5m > /tmp/posix.md
//
// Each cell runs until its state space completes or -limit of wall time
// passes (then it shows "> N", the interleavings explored). Progress goes
// to stderr.
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
)

// row is one family and size, with its known trace count and where it
// comes from.
type row struct {
	family string
	n      int
	known  string
	// fixture, if set, is the program in place of posix/<family>: the
	// family written with the P2 API (ref/<family>_thr).
	fixture string
}

// p2 is the row of a family written with thr_create and thr_join.
func p2(family string, n int, known string) row {
	return row{family: family + "_thr", n: n, known: known, fixture: "ref/" + family + "_thr"}
}

var rows = []row{
	{family: "lastzero", n: 5, known: "64 (published)"},
	{family: "lastzero", n: 10, known: "3,328 (published)"},
	{family: "readers", n: 2, known: "4 (published)"},
	{family: "readers", n: 8, known: "256 (published)"},
	{family: "readers", n: 13, known: "8,192 (published)"},
	{family: "indexer", n: 12, known: "8 (published)"},
	{family: "indexer", n: 13, known: "64 (published)"},
	{family: "indexer", n: 14, known: "512 (published)"},
	{family: "fib_bench", n: 2, known: "19 (enumerated)"},
	{family: "fib_bench", n: 3, known: "141 (enumerated)"},
	{family: "fib_bench", n: 4, known: "1,107 (enumerated)"},
	{family: "filesystem", n: 14, known: "2 (derived: 2^(N−13))"},
	{family: "filesystem", n: 16, known: "8 (derived)"},
	{family: "filesystem", n: 20, known: "128 (derived)"},
	{family: "writers", n: 4, known: "24 (derived: N!)"},
	{family: "writers", n: 6, known: "720 (derived)"},
	{family: "deposits", n: 3, known: "21 (derived: 1+2(K−1)+4(K−1)², nondet values)"},
	{family: "deposits", n: 8, known: "211 (derived)"},
	p2("lastzero", 5, "64 (published)"),
	p2("lastzero", 10, "3,328 (published)"),
	p2("readers", 2, "4 (published)"),
	p2("readers", 8, "256 (published)"),
	p2("readers", 13, "8,192 (published)"),
	p2("indexer", 12, "8 (published)"),
	p2("indexer", 13, "64 (published)"),
	p2("indexer", 14, "512 (published)"),
}

func main() {
	limit := flag.Duration("limit", 5*time.Minute, "wall-time limit of each cell")
	only := flag.String("only", "", "only the rows whose family(N) contains this")
	flag.Parse()
	fmt.Println("| test | known traces | optimal: executions | sleep-set blocked | time | dpor: executions | time |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		name := fmt.Sprintf("%s(%d)", r.family, r.n)
		if !strings.Contains(name, *only) {
			continue
		}
		opt, err := cell(r, "optimal", *limit)
		if err != nil {
			fmt.Fprintln(os.Stderr, "posixtable:", err)
			os.Exit(2)
		}
		dp, err := cell(r, "dpor", *limit)
		if err != nil {
			fmt.Fprintln(os.Stderr, "posixtable:", err)
			os.Exit(2)
		}
		fmt.Printf("| %s | %s | %s | %d | %s | %s | %s |\n", name, r.known, count(opt), opt.SleepBlocked,
			secs(opt.Elapsed), count(dp), secs(dp.Elapsed))
		fmt.Fprintf(os.Stderr, "posixtable: %s done\n", name)
	}
}

// cell explores one family and size under a strategy.
func cell(r row, strategy string, limit time.Duration) (*check.ExploreResult, error) {
	name := r.fixture
	if name == "" {
		name = "posix/" + r.family
	}
	f, ok := fixtures.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("no fixture %s", name)
	}
	image, err := os.ReadFile(f.Path())
	if err != nil {
		return nil, err
	}
	pps, err := check.ResolvePPs(image, check.PPRequest{EveryAccess: true, Args: []string{f.Output, fmt.Sprint(r.n)}})
	if err != nil {
		return nil, err
	}
	spec := check.Spec{Program: f.Output, Kernel: pps.Kernel, Budget: limit}
	spec.Strategy = strategy
	res, err := check.Explore(context.Background(), check.Config{Spec: spec, Image: image}, check.Recording{})
	if err != nil {
		return nil, err
	}
	if res.Bug != nil {
		return nil, fmt.Errorf("%s(%d), %s: a bug: %v", r.family, r.n, strategy, res.Bug)
	}
	return res, nil
}

func count(r *check.ExploreResult) string {
	if !r.Complete {
		return fmt.Sprintf("> %d", r.Executed)
	}
	return fmt.Sprint(r.Executed)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
