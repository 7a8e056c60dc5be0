// Command cxxtable builds Nidhugg's C++ benchmark families from a Nidhugg
// checkout, unchanged (benchmarks/from_RFSC/benchmarks/asserts: indexer,
// fib_bench, peterson, dekker; std::atomic and pthreads), with the
// SDK's C++ library, and explores each size with every shared access a
// PP under the peers' exit convention (--wait-for-threads), under
// optimal DPOR and dpor, beside the published trace counts (Nidhugg and
// GenMC, sequential consistency; dekker's count is of its complete
// executions, the assume-blocked ones apart).
//
//	go run ./bench/cmd/cxxtable -nidhugg /path/to/nidhugg > /tmp/cxx.md
//
// The sources are read from the checkout and built to a temporary
// directory: nothing of Nidhugg's is in this repository.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"landslide/check"
	"landslide/sdk"
)

type row struct {
	file      string // under benchmarks/from_RFSC/benchmarks/asserts
	n         int
	published int
}

var rows = []row{
	{"SV-COMP/indexer.cc", 12, 8},
	{"SV-COMP/indexer.cc", 13, 64},
	{"SV-COMP/indexer.cc", 14, 512},
	{"from_OBSERVERS/fib_bench.cc", 3, 1698},
	{"from_OBSERVERS/fib_bench.cc", 4, 19605},
	{"from_TRACER/peterson.cc", 1, 310},
	{"from_TRACER/peterson.cc", 2, 2420},
	{"from_TRACER/peterson.cc", 3, 10314},
	{"from_SATCHECK/dekker/dekker.cc", 1, 4},
	{"from_SATCHECK/dekker/dekker.cc", 2, 71},
	{"from_SATCHECK/dekker/dekker.cc", 3, 1344},
}

func main() {
	nidhugg := flag.String("nidhugg", "", "a Nidhugg checkout (github nidhugg/nidhugg)")
	limit := flag.Duration("limit", 5*time.Minute, "wall-time limit of each cell")
	flag.Parse()
	if *nidhugg == "" {
		fmt.Fprintln(os.Stderr, "cxxtable: -nidhugg DIR is required")
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "cxxtable-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	fmt.Println("| program (N) | published | optimal: complete / traces | blocked | sleep-set blocked | time | dpor: complete / traces | blocked | time |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		src := filepath.Join(*nidhugg, "benchmarks", "from_RFSC", "benchmarks", "asserts", r.file)
		name := fmt.Sprintf("%s(%d)", filepath.Base(r.file), r.n)
		elf := filepath.Join(tmp, fmt.Sprintf("%s_%d.elf", filepath.Base(r.file), r.n))
		if err := sdk.Build(sdk.Options{Sources: []string{src}, Output: elf, CFlags: []string{fmt.Sprintf("-DN=%d", r.n)}}); err != nil {
			fail(err)
		}
		image, err := os.ReadFile(elf)
		if err != nil {
			fail(err)
		}
		opt := cell(name, elf, image, "optimal", *limit)
		dp := cell(name, elf, image, "dpor", *limit)
		fmt.Printf("| %s | %d | %s | %d | %d | %.2f s | %s | %d | %.2f s |\n", name, r.published,
			count(opt), opt.Blocked, opt.SleepBlocked, opt.Elapsed.Seconds(), count(dp), dp.Blocked, dp.Elapsed.Seconds())
		fmt.Fprintf(os.Stderr, "cxxtable: %s done\n", name)
	}
}

func cell(name, elf string, image []byte, strategy string, limit time.Duration) *check.ExploreResult {
	pps, err := check.ResolvePPs(image, check.PPRequest{EveryAccess: true, WaitForThreads: true, Args: []string{elf}})
	if err != nil {
		fail(err)
	}
	spec := check.Spec{Program: elf, Kernel: pps.Kernel, Budget: limit}
	spec.Strategy = strategy
	res, err := check.Explore(context.Background(), check.Config{Spec: spec, Image: image}, check.Recording{})
	if err != nil {
		fail(err)
	}
	if res.Bug != nil {
		fail(fmt.Errorf("%s, %s: a bug: %v", name, strategy, res.Bug))
	}
	return res
}

// count is the complete executions and their distinct traces, or "> N"
// for a run the limit cut.
func count(r *check.ExploreResult) string {
	if !r.Complete {
		return fmt.Sprintf("> %d", r.Interleavings)
	}
	return fmt.Sprintf("%d / %d", r.Interleavings, r.Traces)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cxxtable:", err)
	os.Exit(2)
}
