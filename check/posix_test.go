package check

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// explorePosix explores fixture posix/<name> at size n (its argv[1]) with
// every shared access a PP, under strategy.
func explorePosix(t *testing.T, name string, n int, strategy string) *ExploreResult {
	t.Helper()
	path := "../fixtures/bin/posix/" + name + ".elf"
	image, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pps, err := ResolvePPs(image, PPRequest{EveryAccess: true, Args: []string{path, fmt.Sprint(n)}})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Program: path, Kernel: pps.Kernel}
	spec.Strategy = strategy
	res, err := Explore(context.Background(), Config{Spec: spec, Image: image}, Recording{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPosixTraceCounts: the published trace counts of the benchmark
// families (Nidhugg and GenMC agree on them; sequential consistency,
// every shared access an event): with optimal DPOR exactly that many
// complete executions, none sleep-set blocked, no bug. The larger sizes
// are in BENCHMARKS.md (bench/cmd/posixtable).
func TestPosixTraceCounts(t *testing.T) {
	for _, c := range []struct {
		name    string
		n, want int
	}{
		{"lastzero", 5, 64},
		{"readers", 2, 4},
		{"readers", 8, 256},
		{"indexer", 12, 8},
		{"indexer", 13, 64},
		{"writers", 4, 24}, // 4! orders of the four stores
		{"filesystem", 15, 4},
	} {
		res := explorePosix(t, c.name, c.n, "optimal")
		if !res.Verified || res.Interleavings != c.want || res.Executed != c.want || res.SleepBlocked != 0 {
			t.Errorf("%s(%d): verified %v, %d interleavings, %d executed, %d sleep-set blocked; want %d, none blocked",
				c.name, c.n, res.Verified, res.Interleavings, res.Executed, res.SleepBlocked, c.want)
		}
	}
}
