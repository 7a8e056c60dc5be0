// Command storebench measures what persistence costs and prints the
// Markdown tables of BENCHMARKS.md ("Persistence"):
//
//   - exploration throughput with the store off and on (the defaults of
//     `landslide explore`: a commit every 2,000 interleavings or 2 s, the
//     interleavings logged for offline race analysis, checkpoints every
//     64 PPs), in alternating runs of the same process;
//
//   - the store's bytes per interleaving and per checkpoint;
//
//   - the time to resume a run whose frontier is deep, from the nearest
//     checkpoint and by re-executing from the program's start.
//
//     go build -o /tmp/storebench ./bench/cmd/storebench
//     GOMAXPROCS=1 taskset -c 0 /tmp/storebench > /tmp/store.md
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"landslide/bench"
	"landslide/fixtures"
	"landslide/job"
	"landslide/store"
)

func fail(err error) {
	fmt.Fprintf(os.Stderr, "storebench: %v\n", err)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "storebench: "+format+"\n", args...)
}

// newRun records a run of cfg in a fresh store, as explore does.
func newRun(cfg *job.Config) (*store.Store, *store.Run, string) {
	dir, err := os.MkdirTemp("", "storebench-")
	if err != nil {
		fail(err)
	}
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		fail(err)
	}
	spec, err := job.EncodeSpec(cfg.Spec)
	if err != nil {
		fail(err)
	}
	bin, err := st.PutBinary(cfg.Image)
	if err != nil {
		fail(err)
	}
	run := &store.Run{Command: "explore", Program: cfg.Program, Binary: bin, Spec: spec, Status: store.StatusRunning}
	if err := st.NewRun(run); err != nil {
		fail(err)
	}
	return st, run, dir
}

type sample struct {
	rate    float64
	res     *job.Result
	usage   store.Usage
	commits int
}

func explore(s bench.Scenario, persist, noLog bool) sample {
	cfg, err := s.Config()
	if err != nil {
		fail(err)
	}
	var st *store.Store
	var dir string
	if persist {
		var run *store.Run
		st, run, dir = newRun(&cfg)
		cfg.Persist = &job.Persist{Store: st, Run: run, NoBranchLog: noLog}
	}
	cpu0 := bench.CPUTime()
	res, err := job.Run(context.Background(), cfg)
	cpu := bench.CPUTime() - cpu0
	if err != nil {
		fail(err)
	}
	// Interleavings per CPU second of the whole process (the store's
	// background work included): unlike wall time, the machine's other
	// tenants do not inflate it.
	out := sample{rate: float64(res.Executed) / cpu.Seconds(), res: res}
	if st != nil {
		if out.usage, err = st.Usage(); err != nil {
			fail(err)
		}
		jb, err := st.Job(cfg.Persist.Run.ID, 1)
		if err != nil {
			fail(err)
		}
		out.commits = jb.Commits
		st.Close()
		os.RemoveAll(dir)
	}
	return out
}

func main() {
	rounds := flag.Int("rounds", 5, "alternating off/on runs per program (medians are reported)")
	cap := flag.Int("cap", 20000, "interleaving cap of the throughput runs")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the resume measurements here")
	doResume := flag.Bool("resume", true, "measure the time to resume deep frontiers")
	flag.Parse()
	if *profile != "" {
		fh, err := os.Create(*profile)
		if err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
		if err := pprof.StartCPUProfile(fh); err != nil {
			fail(err)
		}
		resume()
		return
	}
	if err := os.Chdir(fixtures.Root()); err != nil {
		fail(err)
	}
	commit := "unknown commit"
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	fmt.Printf("Measured %s, %s %s/%s, commit %s, GOMAXPROCS %d, %d rounds.\n\n",
		time.Now().Format("2006-01-02 15:04"), runtime.Version(), runtime.GOOS, runtime.GOARCH, commit, runtime.GOMAXPROCS(0), *rounds)

	fmt.Println("| program | interleavings per run | store off (interleavings per CPU second) | store on (interleavings per CPU second) | on / off | on without the interleaving log / off | commits | store bytes per interleaving | of which the interleaving log | checkpoints | bytes per checkpoint (record + new pages) |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	programs := []string{"ref/paradise_lost", "ref/mutex_test", "ref/thr_exit_join"}
	for _, p := range programs {
		s := bench.RateScenario(p, bench.Variants[0], *cap)
		var off, on, ratio, ratioNoLog []float64
		var last sample
		for r := 0; r < *rounds; r++ {
			a := explore(s, false, false)
			b := explore(s, true, false)
			c := explore(s, true, true)
			off, on = append(off, a.rate), append(on, b.rate)
			ratio = append(ratio, b.rate/a.rate)
			ratioNoLog = append(ratioNoLog, c.rate/a.rate)
			last = b
			logf("%s round %d: off %.0f/s, on %.0f/s (%.3f), on without the log %.0f/s (%.3f)", p, r+1, a.rate, b.rate, b.rate/a.rate, c.rate, c.rate/a.rate)
		}
		n := float64(last.res.Executed)
		cs := last.res.Store
		perCkpt := 0.0
		if cs.Checkpoints > 0 {
			perCkpt = float64(cs.CheckpointBytes) / float64(cs.Checkpoints)
		}
		fmt.Printf("| %s | %d | %.0f | %.0f | %.3f (%.3f–%.3f) | %.3f (%.3f–%.3f) | %d | %.0f | %.0f | %d | %.0f |\n", p, last.res.Executed,
			bench.Median(off), bench.Median(on), bench.Median(ratio), minf(ratio), maxf(ratio),
			bench.Median(ratioNoLog), minf(ratioNoLog), maxf(ratioNoLog),
			last.commits, float64(last.usage.Total.Bytes)/n, float64(cs.BranchBytes)/n, cs.Checkpoints, perCkpt)
	}
	fmt.Println()
	attribution(programs, *cap)
	fmt.Println()
	if *doResume {
		resume()
	}
}

// attribution profiles one persisted exploration per program and reports
// the share of its CPU samples spent persisting: encoding interleavings
// into the log, capturing a commit, and the background write (encoding,
// compression, Pebble). Both sides are sampled in the same run, so the
// machine's speed changes (which make the throughput ratios above noisy
// on a shared machine) cancel out. It runs `go tool pprof`.
func attribution(programs []string, cap int) {
	fmt.Println("| program | interleavings | CPU samples | logging interleavings | commits in the explorer's goroutine (capture; the last one whole) | background writes | persistence in all |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, p := range programs {
		s := bench.RateScenario(p, bench.Variants[0], cap)
		cfg, err := s.Config()
		if err != nil {
			fail(err)
		}
		st, run, dir := newRun(&cfg)
		cfg.Persist = &job.Persist{Store: st, Run: run}
		prof, err := os.CreateTemp("", "storebench-*.prof")
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(prof); err != nil {
			fail(err)
		}
		res, err := job.Run(context.Background(), cfg)
		pprof.StopCPUProfile()
		prof.Close()
		st.Close()
		os.RemoveAll(dir)
		if err != nil {
			fail(err)
		}
		exe, _ := os.Executable()
		out, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=100000", exe, prof.Name()).Output()
		os.Remove(prof.Name())
		if err != nil {
			fail(fmt.Errorf("go tool pprof: %v", err))
		}
		total, shares := pprofShares(string(out), map[string]string{
			"log":    "landslide/job.(*persister).branch",
			"commit": "landslide/job.(*persister).commit",
			"write":  "landslide/job.(*persister).writeAsync",
		})
		capture := shares["commit"]
		fmt.Printf("| %s | %d | %.2f s | %.1f%% | %.1f%% | %.1f%% | **%.1f%%** |\n", p, res.Executed, total,
			100*shares["log"], 100*capture, 100*shares["write"], 100*(shares["log"]+capture+shares["write"]))
	}
}

// pprofShares reads `go tool pprof -top -cum` output: the total sample
// time and, for each function name, its cumulative share.
func pprofShares(out string, want map[string]string) (float64, map[string]float64) {
	total := 0.0
	shares := map[string]float64{}
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "Total samples = "); i >= 0 {
			f := strings.Fields(l[i+len("Total samples = "):])
			if len(f) > 0 {
				total = seconds(f[0])
			}
			continue
		}
		f := strings.Fields(l)
		if len(f) < 6 || total == 0 {
			continue
		}
		name := strings.Join(f[5:], " ")
		for k, fn := range want {
			if name == fn {
				shares[k] += seconds(f[3]) / total
			}
		}
	}
	return total, shares
}

func seconds(s string) float64 {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0
	}
	return d.Seconds()
}

func minf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// resume measures the time to resume a run whose frontier is deep:
// bench/mutex_n with 2 workers of many increments stopped after some
// interleavings, then resumed for one more, with its checkpoints and
// without (re-executing the branch from the program's start).
func resume() {
	fmt.Println("| program | frontier depth (PPs) | stored after | checkpoints | bytes per checkpoint (record + new pages) | resume + 1 interleaving, with checkpoints | same, without (re-executing from the start) | ratio |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, incs := range []string{"100", "1000"} {
		s := bench.Scenario{Fixture: "bench/mutex_n", Args: []string{"2", incs}}
		s.DPOR.MaxInterleavings = 200
		var times [2][]float64
		depth := 0
		var cs store.CommitStats
		for r := 0; r < 5; r++ {
			for i, every := range []int{job.DefaultCheckpointEvery, -1} {
				cfg, err := s.Config()
				if err != nil {
					fail(err)
				}
				cfg.Kernel.MaxPPs = 1 << 20
				st, run, dir := newRun(&cfg)
				cfg.Persist = &job.Persist{Store: st, Run: run, CheckpointEvery: every}
				res, err := job.Run(context.Background(), cfg)
				if err != nil {
					fail(err)
				}
				depth = res.Depth
				if every > 0 {
					cs = res.Store
				}
				cfg.MaxInterleavings = res.Executed + 1
				cfg.Persist = &job.Persist{Store: st, Run: run, CheckpointEvery: every, Resume: true}
				t0 := time.Now()
				if _, err := job.Run(context.Background(), cfg); err != nil {
					fail(err)
				}
				times[i] = append(times[i], time.Since(t0).Seconds())
				st.Close()
				os.RemoveAll(dir)
			}
		}
		a, b := bench.Median(times[0]), bench.Median(times[1])
		per := 0.0
		if cs.Checkpoints > 0 {
			per = float64(cs.CheckpointBytes) / float64(cs.Checkpoints)
		}
		fmt.Printf("| bench/mutex_n 2 %s | %d | 200 interleavings | %d | %.0f | %.1f ms | %.1f ms | %.2f |\n",
			incs, depth, cs.Checkpoints, per, 1000*a, 1000*b, b/a)
	}
}
