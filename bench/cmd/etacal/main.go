// Command etacal calibrates the ETA that `landslide explore` shows (issue
// 39): it runs a set of whole explorations (different programs, PP sets
// and strategies: DPOR, optimal DPOR, retry sets, iterative context
// bounding with a cap), records the smoothed forecast after every
// interleaving (estimator.Smoother: the ETA and its likely range, what
// the progress line prints, scaled to the run's clock as the line scales
// it), and once each run is over and its true end known, prints the
// Markdown table of BENCHMARKS.md ("ETA calibration"): at 10%, 25%, 50%,
// 75%, 90% and 95% of each run's time, the ratio of the predicted to the
// actual time left, and whether the printed range held the actual time
// left; then per percentage the median ratio and how often the range
// held.
//
//	go run ./bench/cmd/etacal > /tmp/eta.md    # about 10 minutes; progress on stderr
//
// The clock is deterministic work by default (-clock work), so that the
// table is the same on any machine and under any load: 16 ns per guest
// instruction the emulator executes (its rate with access tracking on,
// BENCHMARKS.md), 8 µs more per transition (the PP, DPOR's bookkeeping,
// the snapshot), 1.2 µs per restore of a snapshot. The clock only decides
// the estimates, never what is explored (dpor.Options.Now). -clock wall
// uses the wall clock instead, to check that the work clock stands for it.
//
// The explorations run the explorer as job.Run does, without the
// data-race analysis (it decides nothing in a single job, and the
// estimator leaves its time out anyway), one at a time. -save DIR keeps
// each run's raw estimates, and -load DIR evaluates the smoother on them
// without exploring again (the raw estimates do not depend on the
// smoother). -only runs the runs whose name contains a string; -list
// lists them.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"landslide/dpor"
	"landslide/estimator"
	"landslide/fixtures"
	"landslide/job"
	"landslide/kernel"
)

// run is one exploration of the calibration set.
type run struct {
	name    string
	fixture string
	args    []string // argv[1:]
	req     job.PPRequest
	spec    dpor.Spec
}

// without are the thread-library functions the thesis left out of its PP
// sets (--without).
var without = []string{"thr_create", "thr_exit", "thr_join"}

// runs are the explorations: different programs, PP sets and strategies,
// each 30 s to a few minutes of wall time on the 2-core VM of
// BENCHMARKS.md.
var runs = []run{
	{name: "paradise_n 2, --without thr_*", fixture: "bench/paradise_n", args: []string{"2"},
		req: job.PPRequest{Without: without, NoTestConfig: true}},
	{name: "mutex_n 2", fixture: "bench/mutex_n", args: []string{"2"}, req: job.PPRequest{NoTestConfig: true}},
	{name: "readers 16, every access, optimal", fixture: "posix/readers", args: []string{"16"},
		req: job.PPRequest{EveryAccess: true}, spec: dpor.Spec{Strategy: "optimal"}},
	{name: "indexer 16, every access", fixture: "posix/indexer", args: []string{"16"}, req: job.PPRequest{EveryAccess: true}},
	{name: "lastzero 13, every access, optimal", fixture: "posix/lastzero", args: []string{"13"},
		req: job.PPRequest{EveryAccess: true}, spec: dpor.Spec{Strategy: "optimal"}},
	{name: "lastzero 14, every access", fixture: "posix/lastzero", args: []string{"14"}, req: job.PPRequest{EveryAccess: true}},
	{name: "htm2 3 2", fixture: "htm/htm2", args: []string{"3", "2"}},
	{name: "htm2 3 2, retry sets", fixture: "htm/htm2", args: []string{"3", "2"}, spec: dpor.Spec{RetrySets: true}},
	{name: "paraguay, icb ≤ 3", fixture: "ref/paraguay", spec: dpor.Spec{Strategy: "icb", MaxBound: dpor.Bound(3)}},
	{name: "paradise_lost, icb ≤ 3", fixture: "ref/paradise_lost", spec: dpor.Spec{Strategy: "icb", MaxBound: dpor.Bound(3)}},
}

// The work clock's costs (see the package comment).
const (
	nsPerInstruction = 16
	nsPerTransition  = 8000
	nsPerRestore     = 1200
)

// sample is the raw estimate after one interleaving, at the run's clock.
type sample struct {
	Clock      int64 // the run's clock (ns)
	Elapsed    int64 // the estimator's elapsed time (ns)
	Total      int64 // the RE's total
	Proportion float64
	Size       float64
	Branches   int64
	// The sibling model's estimates (estimator.Estimate).
	ModelProportion float64
	ModelTotal      int64
	Kappa           float64
}

func (s sample) estimate() estimator.Estimate {
	return estimator.Estimate{Branches: int(s.Branches), Proportion: s.Proportion, Size: s.Size,
		Total: time.Duration(s.Total), Elapsed: time.Duration(s.Elapsed),
		ModelProportion: s.ModelProportion, ModelTotal: time.Duration(s.ModelTotal), Kappa: s.Kappa}
}

var percents = []float64{10, 25, 50, 75, 90, 95}

func main() {
	clock := flag.String("clock", "work", "the estimator's clock: work (deterministic: instructions, transitions, restores) or wall")
	only := flag.String("only", "", "only the runs whose name contains this")
	save := flag.String("save", "", "keep each run's raw estimates in this directory")
	load := flag.String("load", "", "evaluate the raw estimates kept in this directory (by -save) instead of exploring")
	list := flag.Bool("list", false, "list the runs and exit")
	flag.Parse()
	if *clock != "work" && *clock != "wall" {
		fail(fmt.Errorf("-clock %q: work or wall", *clock))
	}
	if *list {
		for _, r := range runs {
			fmt.Println(r.name)
		}
		return
	}
	var rows []result
	start := time.Now()
	for i, r := range runs {
		if !strings.Contains(r.name, *only) {
			continue
		}
		var ss []sample
		var err error
		file := func(dir string) string { return filepath.Join(dir, fmt.Sprintf("run%02d.bin", i)) }
		t0 := time.Now()
		if *load != "" {
			ss, err = readSamples(file(*load))
		} else {
			ss, err = explore(r, *clock)
			if err == nil && *save != "" {
				err = writeSamples(file(*save), ss)
			}
		}
		if err != nil {
			fail(fmt.Errorf("%s: %w", r.name, err))
		}
		res := evaluate(r.name, ss)
		fmt.Fprintf(os.Stderr, "etacal: %s: %d interleavings, %v of %s time, %v wall\n", r.name, len(ss),
			time.Duration(res.end).Round(time.Millisecond), *clock, time.Since(t0).Round(time.Second))
		rows = append(rows, res)
	}
	printTable(os.Stdout, rows, *clock)
	fmt.Fprintf(os.Stderr, "etacal: done in %v\n", time.Since(start).Round(time.Second))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "etacal:", err)
	os.Exit(2)
}

// explore runs r to its end and returns the raw estimate after every
// interleaving.
func explore(r run, clock string) ([]sample, error) {
	f, ok := fixtures.Lookup(r.fixture)
	if !ok {
		return nil, fmt.Errorf("no fixture %q", r.fixture)
	}
	img, err := os.ReadFile(f.Path())
	if err != nil {
		return nil, err
	}
	req := r.req
	req.Args = append([]string{f.Output}, r.args...)
	pps, err := job.ResolvePPs(img, req)
	if err != nil {
		return nil, err
	}
	spec := job.Spec{Program: f.Output, Kernel: pps.Kernel, Spec: r.spec}
	k, err := kernel.New(img, spec.KernelConfig())
	if err != nil {
		return nil, err
	}
	now := workClock(k)
	if clock == "wall" {
		t0 := time.Now()
		now = func() time.Duration { return time.Since(t0) }
	}
	var ss []sample
	opt := dpor.Options{Spec: spec.Spec, Now: now}
	opt.NoDepthHeuristic = !spec.Kernel.ThesisHeuristics // as job.Run
	opt.OnBranch = func(b *dpor.Branch) dpor.Stop {
		e := b.Estimate
		ss = append(ss, sample{Clock: int64(now()), Elapsed: int64(e.Elapsed), Total: int64(e.Total),
			Proportion: e.Proportion, Size: e.Size, Branches: int64(e.Branches),
			ModelProportion: e.ModelProportion, ModelTotal: int64(e.ModelTotal), Kappa: e.Kappa})
		if len(ss)%50000 == 0 {
			fmt.Fprintf(os.Stderr, "etacal: %s: %d interleavings, %.1f%%\n", r.name, len(ss), 100*e.Proportion)
		}
		return dpor.Continue
	}
	x, err := dpor.New(k, opt)
	if err != nil {
		return nil, err
	}
	res, err := x.Run(context.Background())
	if err != nil {
		return nil, err
	}
	if res.Bug != nil {
		return nil, fmt.Errorf("a bug: %v", res.Bug)
	}
	if !res.Complete && res.Stopped != dpor.StopBound { // a bounded run ends at its bound
		return nil, fmt.Errorf("did not complete (%v)", res.Stopped)
	}
	return ss, nil
}

// workClock is the deterministic clock of k's work (see the package
// comment). The explorer reads it after each transition and around each
// restore; the guest's instruction count goes back when a snapshot is
// restored.
func workClock(k *kernel.Kernel) func() time.Duration {
	var acc, last uint64
	return func() time.Duration {
		switch i := k.Instructions(); {
		case i > last: // a transition
			acc += (i-last)*nsPerInstruction + nsPerTransition
		case i < last: // a restore
			acc += nsPerRestore
		}
		last = k.Instructions()
		return time.Duration(acc)
	}
}

// point is what the progress line showed at one moment, against the truth.
type point struct {
	ok      bool
	ratio   float64 // predicted / actual time left
	inRange bool
}

type result struct {
	name   string
	n      int   // interleavings
	end    int64 // the run's clock at its end
	points []point
}

// evaluate replays the smoother over the raw estimates, as job.Run does,
// and reads the forecast at each percentage of the run's time, scaled to
// the run's clock as the progress line scales it (cli.wallScale).
func evaluate(name string, ss []sample) result {
	res := result{name: name, n: len(ss)}
	if len(ss) == 0 {
		return res
	}
	res.end = ss[len(ss)-1].Clock
	var sm estimator.Smoother
	next := 0
	for i, s := range ss {
		sm.Observe(s.estimate())
		// The forecast shown at a percentage is the one after the last
		// interleaving before it.
		for next < len(percents) && (i+1 == len(ss) || float64(ss[i+1].Clock) > percents[next]/100*float64(res.end)) {
			res.points = append(res.points, judge(sm.Forecast(), s, res.end))
			next++
		}
	}
	return res
}

// judge compares the forecast f made at s with the run's end.
func judge(f estimator.Forecast, s sample, end int64) point {
	if !f.OK {
		return point{}
	}
	scale := 1.0 // cli.wallScale
	if el := max(f.Elapsed, time.Duration(s.Elapsed)); el > 0 && s.Clock > int64(el) {
		scale = float64(s.Clock) / float64(el)
	}
	actual := float64(end - s.Clock)
	pred := float64(f.ETA) * scale
	lo, hi := float64(f.Low)*scale, float64(f.High)*scale
	p := point{ok: true, inRange: lo <= actual && actual <= hi}
	switch {
	case actual > 0:
		p.ratio = pred / actual
	case pred == 0:
		p.ratio = 1
	default:
		p.ratio = math.Inf(1)
	}
	return p
}

func printTable(w io.Writer, rows []result, clock string) {
	fmt.Fprint(w, "| run | interleavings | "+clock+" time |")
	for _, p := range percents {
		fmt.Fprintf(w, " at %g%% |", p)
	}
	fmt.Fprint(w, "\n|---|---:|---:|")
	for range percents {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %.1f s |", r.name, r.n, float64(r.end)/1e9)
		for _, p := range r.points {
			fmt.Fprintf(w, " %s |", cellText(p))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| **median ratio** | | |")
	for i := range percents {
		var xs []float64
		for _, r := range rows {
			if i < len(r.points) {
				xs = append(xs, ratioOf(r.points[i]))
			}
		}
		fmt.Fprintf(w, " **%s** |", ratioText(median(xs)))
	}
	fmt.Fprint(w, "\n| **range held** | | |")
	all, held := 0, 0
	for i := range percents {
		n, h := 0, 0
		for _, r := range rows {
			if i < len(r.points) {
				n++
				if r.points[i].inRange {
					h++
				}
			}
		}
		all, held = all+n, held+h
		fmt.Fprintf(w, " **%d/%d** |", h, n)
	}
	fmt.Fprintf(w, "\n\nEach cell: the predicted over the actual time left, ✓ when the likely range held the actual time left.\n"+
		"The range held it in %d of %d cells (%.0f%%).\n", held, all, 100*float64(held)/float64(max(all, 1)))
}

func ratioOf(p point) float64 {
	if !p.ok {
		return 0
	}
	return p.ratio
}

func cellText(p point) string {
	if !p.ok {
		return "no ETA"
	}
	s := ratioText(p.ratio)
	if p.inRange {
		s += " ✓"
	}
	return s
}

func ratioText(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "∞"
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	default:
		return fmt.Sprintf("%.2f", r)
	}
}

// median of ratios; of an even count, the geometric mean of the middle two.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return math.Sqrt(xs[n/2-1] * xs[n/2])
}

func writeSamples(path string, ss []sample) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := binary.Write(w, binary.LittleEndian, ss); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readSamples(path string) ([]sample, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	size := binary.Size(sample{})
	if len(b)%size != 0 {
		return nil, errors.New(path + ": not a whole number of samples")
	}
	ss := make([]sample, len(b)/size)
	if err := binary.Read(bytes.NewReader(b), binary.LittleEndian, ss); err != nil {
		return nil, err
	}
	return ss, nil
}
