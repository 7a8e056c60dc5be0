package job_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"landslide/bench"
)

// The exploration benchmarks (BENCHMARKS.md, "Exploration"). Each
// iteration is one whole job.Run; run them one iteration at a time, on one
// core:
//
//	taskset -c 0 go test -run '^$' -bench Explore -benchtime 1x -count 3 ./job/
//	taskset -c 0 go test -run '^$' -bench FirstBug -benchtime 1x -count 3 ./job/
//	taskset -c 0 go test -run '^$' -bench Scaling -benchtime 1x -count 3 ./job/
//
// The caps are flags (e.g. -explore.bugcap 200000 -explore.budget 120s
// after the package). bench/cmd/explorebench runs the same scenarios and
// prints the tables of BENCHMARKS.md.
var (
	rateCap   = flag.Int("explore.ratecap", 50000, "interleaving cap of BenchmarkExplore")
	bugCap    = flag.Int("explore.bugcap", 20000, "interleaving cap of BenchmarkFirstBug")
	scaleCap  = flag.Int("explore.scalecap", 20000, "interleaving cap of BenchmarkScaling")
	budget    = flag.Duration("explore.budget", 60*time.Second, "time budget of one exploration in BenchmarkFirstBug and BenchmarkScaling")
	maxThread = flag.Int("explore.maxn", 3, "largest number of threads of BenchmarkScaling")
)

// measure runs s b.N times and reports interleavings per second (over the
// explorations' own elapsed time) and per exploration.
func measure(b *testing.B, s bench.Scenario) bench.Measurement {
	b.Helper()
	var m bench.Measurement
	var n int
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		var err error
		if m, err = bench.Run(s); err != nil {
			b.Fatal(err)
		}
		n += m.Interleavings
		elapsed += m.Elapsed
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "interleavings/s")
	b.ReportMetric(float64(m.Interleavings), "interleavings/op")
	b.ReportMetric(float64(m.Transitions), "transitions/op")
	return m
}

// BenchmarkExplore: interleavings per second exploring ref/paradise_lost
// and ref/mutex_test with --pp mutex_lock,mutex_unlock, under the dpor
// strategy, without sleep sets, with AllPairs (the thesis's DPOR), and
// under explore's default (optimal DPOR with its fallback).
func BenchmarkExplore(b *testing.B) {
	for _, prog := range bench.RatePrograms {
		for _, v := range bench.Variants {
			b.Run(strings.TrimPrefix(prog, "ref/")+"/"+v.Short, func(b *testing.B) {
				measure(b, bench.RateScenario(prog, v, *rateCap))
			})
		}
	}
}

// BenchmarkFirstBug: interleavings and time until the bug of every
// seeded-bug fixture, with DPOR defaults. A bug not found within the caps
// is logged and reported as found=0.
func BenchmarkFirstBug(b *testing.B) {
	for _, f := range bench.BugFixtures() {
		b.Run(strings.ReplaceAll(f.Name, "/", ":"), func(b *testing.B) {
			m := measure(b, bench.BugScenario(f, *bugCap, *budget))
			found := 0.0
			if m.Bug != "" {
				found = 1
			} else {
				b.Logf("%s: no bug within %d interleavings (%s)", f.Name, m.Interleavings, m.Stopped)
			}
			b.ReportMetric(found, "found")
		})
	}
}

// BenchmarkScaling: bench/paradise_n and bench/mutex_n with N = 1..maxn
// threads, with and without PPs in thr_create/thr_exit/thr_join; reports
// the estimated state-space size (exact when complete=1).
func BenchmarkScaling(b *testing.B) {
	for _, prog := range bench.ScalingPrograms {
		for _, without := range []bool{false, true} {
			for n := 1; n <= *maxThread; n++ {
				name := fmt.Sprintf("%s/N=%d/thr", strings.TrimPrefix(prog, "bench/"), n)
				if without {
					name = fmt.Sprintf("%s/N=%d/nothr", strings.TrimPrefix(prog, "bench/"), n)
				}
				b.Run(name, func(b *testing.B) {
					m := measure(b, bench.ScalingScenario(prog, n, without, *scaleCap, *budget))
					complete := 0.0
					if m.Complete {
						complete = 1
					}
					b.ReportMetric(complete, "complete")
					b.ReportMetric(m.EstimatedSize, "size")
				})
			}
		}
	}
}
