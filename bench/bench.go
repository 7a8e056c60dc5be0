// Package bench defines the exploration benchmarks of BENCHMARKS.md: the
// interleavings per second of whole DPOR explorations, the time to the
// first bug of every seeded-bug fixture, and how state spaces grow with
// the number of threads. Each measurement is one job.Run, configured as
// `landslide explore` would configure it (Scenario.Command gives that
// command line). Both the table generator (bench/cmd/explorebench) and the
// Go benchmarks (job/bench_test.go) run these scenarios.
package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"landslide/dpor"
	"landslide/emu/elfsym"
	"landslide/fixtures"
	"landslide/job"
	"landslide/kernel"
)

// Scenario is one exploration.
type Scenario struct {
	// Fixture names the program in the fixtures catalog; Args are its
	// arguments (argv[1:]).
	Fixture string
	Args    []string
	// SyncPPs are the function PPs (nil: kernel.DefaultSyncPPs, which is
	// mutex_lock,mutex_unlock).
	SyncPPs []string
	// RaceFuncs make every memory instruction of these functions a
	// data-race PP (--data-race-func).
	RaceFuncs []string
	// Without are --without filters.
	Without []string
	// The exploration (MaxInterleavings is the interleaving cap).
	DPOR dpor.Spec
	// Budget is the time budget (0: none).
	Budget time.Duration
}

// Measurement is what one exploration did.
type Measurement struct {
	Interleavings int // interleavings run (all ICB rounds)
	Transitions   int
	Complete      bool      // the state space was explored completely
	Stopped       dpor.Stop // why an incomplete exploration without a bug stopped
	Bug           string    // bug kind ("" if none)
	BugMessage    string
	Preemptions   int     // in the bug's interleaving
	EstimatedSize float64 // WBE estimate of the state space (= Interleavings when complete)
	Elapsed       time.Duration
	// CPU is the process's user+system CPU time during the exploration
	// (including the Go runtime's own threads), which, unlike Elapsed, the
	// other processes of the machine do not inflate.
	CPU time.Duration
}

// Rate is interleavings per second of wall time.
func (m Measurement) Rate() float64 { return float64(m.Interleavings) / m.Elapsed.Seconds() }

// CPURate is interleavings per CPU second.
func (m Measurement) CPURate() float64 { return float64(m.Interleavings) / m.CPU.Seconds() }

// Program is the scenario's ELF path relative to the repository root.
func (s Scenario) Program() string {
	f, _ := fixtures.Lookup(s.Fixture)
	return f.Output
}

// Config is the job configuration of the scenario.
func (s Scenario) Config() (job.Config, error) {
	f, ok := fixtures.Lookup(s.Fixture)
	if !ok {
		return job.Config{}, fmt.Errorf("no fixture %q", s.Fixture)
	}
	img, err := os.ReadFile(f.Path())
	if err != nil {
		return job.Config{}, err
	}
	// The program's directives are not applied (as the scenarios were
	// always measured), but its testing_mutexes declaration is.
	pps, err := job.ResolvePPs(img, job.PPRequest{PPs: s.SyncPPs, Without: s.Without, NoTestConfig: true,
		Args: append([]string{f.Output}, s.Args...)})
	if err != nil {
		return job.Config{}, err
	}
	k := pps.Kernel
	img2, err := elfsym.Parse(img)
	if err != nil {
		return job.Config{}, err
	}
	d, err := kernel.ParseDirectives(img2.Directives, img2.Symbols)
	if err != nil {
		return job.Config{}, err
	}
	if len(s.RaceFuncs) > 0 {
		if k.DataRacePCs, err = kernel.MemoryPCs(img, s.RaceFuncs); err != nil {
			return job.Config{}, err
		}
	}
	return job.Config{Spec: job.Spec{Program: f.Output, Kernel: k, Spec: s.DPOR,
		TestingMutexes: d.TestingMutexes, Budget: s.Budget}, Image: img}, nil
}

// Run explores the scenario once.
func Run(s Scenario) (Measurement, error) {
	cfg, err := s.Config()
	if err != nil {
		return Measurement{}, err
	}
	cpu0 := cpuTime()
	res, err := job.Run(context.Background(), cfg)
	cpu := cpuTime() - cpu0
	if err != nil {
		return Measurement{}, fmt.Errorf("%s: %v", s.Fixture, err)
	}
	m := Measurement{Interleavings: res.Executed, Transitions: res.Transitions, Complete: res.Complete,
		Stopped: res.Stopped, EstimatedSize: res.Estimate.Size, Elapsed: res.Elapsed, CPU: cpu}
	if res.Complete {
		m.EstimatedSize = float64(res.Interleavings)
	}
	if res.Bug != nil {
		m.Bug, m.BugMessage = res.Bug.Kind.String(), res.Bug.Message
	}
	if res.BugBranch != nil {
		m.Preemptions = res.BugBranch.Preemptions
	}
	return m, nil
}

// CPUTime is the process's user+system CPU time so far.
func CPUTime() time.Duration { return cpuTime() }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Command is the `landslide explore` command line of the scenario (the
// AllPairs option has no flag: it is noted after the command).
func (s Scenario) Command() string {
	var b strings.Builder
	fmt.Fprintf(&b, "landslide explore %s", s.Program())
	if s.SyncPPs != nil {
		fmt.Fprintf(&b, " --pp %s", strings.Join(s.SyncPPs, ","))
	}
	for _, f := range s.RaceFuncs {
		fmt.Fprintf(&b, " --data-race-func %s", f)
	}
	for _, w := range s.Without {
		fmt.Fprintf(&b, " --without %s", w)
	}
	if s.DPOR.NoSleepSets {
		b.WriteString(" --no-sleep-sets")
	}
	if s.DPOR.Strategy != "" {
		fmt.Fprintf(&b, " --strategy %s", s.DPOR.Strategy)
	}
	if s.DPOR.MaxBound != nil {
		fmt.Fprintf(&b, " --preemption-bound %d", *s.DPOR.MaxBound)
	}
	if s.DPOR.MaxInterleavings > 0 {
		fmt.Fprintf(&b, " --max-interleavings %d", s.DPOR.MaxInterleavings)
	}
	if s.Budget > 0 {
		fmt.Fprintf(&b, " --budget %s", s.Budget)
	}
	if len(s.Args) > 0 {
		fmt.Fprintf(&b, " -- %s", strings.Join(s.Args, " "))
	}
	if s.DPOR.AllPairs {
		b.WriteString("   # with dpor.Spec{AllPairs: true}: no CLI flag")
	}
	return b.String()
}

// RatePrograms are the programs whose exploration rate is measured.
var RatePrograms = []string{"ref/paradise_lost", "ref/mutex_test"}

// Variant is a DPOR configuration compared with the default.
type Variant struct {
	Name  string
	Short string // for benchmark names
	Apply func(*dpor.Spec)
}

// Variants are the DPOR configurations of the rate comparison; the first
// (the dpor strategy, the default before optimal DPOR) is the one the
// others are compared with.
var Variants = []Variant{
	{"dpor (direct races, sleep sets)", "dpor", func(*dpor.Spec) {}},
	{"no sleep sets", "nosleep", func(o *dpor.Spec) { o.NoSleepSets = true }},
	{"AllPairs (thesis DPOR)", "allpairs", func(o *dpor.Spec) { o.AllPairs = true }},
	{"optimal DPOR with its fallback (explore's default)", "optimal", func(o *dpor.Spec) { o.Strategy, o.Fallback = "optimal", true }},
}

// RateScenario explores program with --pp mutex_lock,mutex_unlock under
// variant v, stopping after maxInterleavings.
func RateScenario(program string, v Variant, maxInterleavings int) Scenario {
	s := Scenario{Fixture: program, SyncPPs: []string{"mutex_lock", "mutex_unlock"}}
	s.DPOR.MaxInterleavings = maxInterleavings
	v.Apply(&s.DPOR)
	return s
}

// BugFixtures are the fixtures with a seeded bug to find: every catalog
// entry that expects a bug and is built with a seeded-bug library, plus
// ref/fig1 and ref/deadlock_*.
func BugFixtures() []fixtures.Fixture {
	var out []fixtures.Fixture
	for _, f := range fixtures.All() {
		if f.Expect == "ok" {
			continue
		}
		seeded := f.Lib != "" && f.Lib != "ref"
		if seeded || f.Name == "ref/fig1" || strings.HasPrefix(f.Name, "ref/deadlock_") {
			out = append(out, f)
		}
	}
	return out
}

// BugScenario looks for f's bug with DPOR defaults, its RacePPFuncs as
// data-race PPs, within the caps.
func BugScenario(f fixtures.Fixture, maxInterleavings int, budget time.Duration) Scenario {
	s := Scenario{Fixture: f.Name, RaceFuncs: f.RacePPFuncs, Budget: budget}
	s.DPOR.MaxInterleavings = maxInterleavings
	return s
}

// ThreadFuncs are the thread-library functions the thesis excluded from
// preemption (--without) in its scaling tests.
var ThreadFuncs = []string{"thr_create", "thr_exit", "thr_join"}

// ScalingPrograms take the number of threads as argv[1].
var ScalingPrograms = []string{"bench/paradise_n", "bench/mutex_n"}

// ScalingScenario explores program with n threads under the default PP
// set, with or without PPs inside thr_create/thr_exit/thr_join.
func ScalingScenario(program string, n int, withoutThr bool, maxInterleavings int, budget time.Duration) Scenario {
	s := Scenario{Fixture: program, Args: []string{fmt.Sprint(n)}, Budget: budget}
	if withoutThr {
		s.Without = ThreadFuncs
	}
	s.DPOR.MaxInterleavings = maxInterleavings
	return s
}

// Median is the median of xs (the mean of the middle two for an even
// count); NaN for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
