// Command explorebench measures whole DPOR explorations and prints the
// Markdown tables of BENCHMARKS.md ("Exploration"): interleavings per
// second, time to the first bug of every seeded-bug fixture, and scaling
// with the number of threads. Run it on one core:
//
//	go build -o /tmp/explorebench ./bench/cmd/explorebench
//	taskset -c 0 /tmp/explorebench > /tmp/explore.md
//
// Every figure is the median of -rounds runs (with the range); the runs of
// the configurations compared in a ratio alternate, so that noise from the
// machine hits them alike. Progress goes to stderr.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"landslide/bench"
	"landslide/dpor"
	"landslide/fixtures"
)

type options struct {
	rounds      int
	sections    map[string]bool
	rateCap     int
	bugCap      int
	bugBudget   time.Duration
	scaleCap    int
	scaleBudget time.Duration
	fullCap     int
	fullBudget  time.Duration
	maxN        int
	only        string
}

func main() {
	var o options
	var sections string
	flag.IntVar(&o.rounds, "rounds", 3, "runs per measurement (medians are reported)")
	flag.StringVar(&sections, "sections", "rate,bugs,scaling", "which tables: rate, bugs, scaling (comma-separated)")
	flag.IntVar(&o.rateCap, "rate-cap", 50000, "interleaving cap of the rate measurements")
	flag.IntVar(&o.bugCap, "bug-cap", 200000, "interleaving cap of the search for a bug")
	flag.DurationVar(&o.bugBudget, "bug-budget", 120*time.Second, "time budget of the search for a bug")
	flag.IntVar(&o.scaleCap, "scale-cap", 20000, "interleaving cap of the scaling measurements")
	flag.DurationVar(&o.scaleBudget, "scale-budget", 120*time.Second, "time budget of the scaling measurements")
	flag.IntVar(&o.fullCap, "complete-cap", 1000000, "scaling: interleaving cap of the one run that tries to complete a state space the capped runs did not (tried if the estimate is at most twice this)")
	flag.DurationVar(&o.fullBudget, "complete-budget", 5*time.Minute, "scaling: time budget of that run")
	flag.IntVar(&o.maxN, "max-n", 4, "largest number of threads of the scaling table")
	flag.StringVar(&o.only, "only", "", "only fixtures whose name contains this")
	flag.Parse()
	if o.rounds < 1 || o.maxN < 1 {
		fmt.Fprintln(os.Stderr, "explorebench: -rounds and -max-n must be at least 1")
		os.Exit(2)
	}
	o.sections = map[string]bool{}
	for _, s := range strings.Split(sections, ",") {
		o.sections[strings.TrimSpace(s)] = true
	}
	if err := os.Chdir(fixtures.Root()); err != nil {
		fail(err)
	}
	w := os.Stdout
	st0 := readStat()
	start := time.Now()
	header(w, o)
	if o.sections["rate"] {
		rate(w, o)
	}
	if o.sections["bugs"] {
		bugs(w, o)
	}
	if o.sections["scaling"] {
		scaling(w, o)
	}
	footer(w, st0, time.Since(start))
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "explorebench: %v\n", err)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "explorebench: "+format+"\n", args...)
}

func run(s bench.Scenario) bench.Measurement {
	m, err := bench.Run(s)
	if err != nil {
		fail(err)
	}
	res := "no bug"
	if m.Bug != "" {
		res = "bug " + m.Bug
	}
	if !m.Complete && m.Bug == "" {
		res += ", stopped: " + m.Stopped.String()
	}
	logf("%-70s %7d interleavings %8.2fs %6.0f/s (%s)", strings.TrimPrefix(s.Command(), "landslide explore "),
		m.Interleavings, m.Elapsed.Seconds(), m.Rate(), res)
	return m
}

// header describes the machine and the run.
func header(w io.Writer, o options) {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				model = strings.TrimSpace(l[strings.Index(l, ":")+1:])
				break
			}
		}
	}
	commit := "unknown commit"
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
		if out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(out) > 0 {
			commit += " (with uncommitted changes)"
		}
	}
	fmt.Fprintf(w, "Measured %s on %s, %s %s/%s, commit %s; CPUs usable by the process: %d, GOMAXPROCS %d; %d rounds.\n\n",
		time.Now().Format("2006-01-02 15:04"), model, runtime.Version(), runtime.GOOS, runtime.GOARCH, commit,
		runtime.NumCPU(), runtime.GOMAXPROCS(0), o.rounds)
}

type stat struct{ steal, total uint64 }

// readStat reads the all-CPU line of /proc/stat.
func readStat() stat {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return stat{}
	}
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	var s stat
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		s.total += n
		if i == 7 {
			s.steal = n
		}
	}
	return s
}

func footer(w io.Writer, st0 stat, elapsed time.Duration) {
	st := readStat()
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	steal := math.NaN()
	if st.total > st0.total {
		steal = 100 * float64(st.steal-st0.steal) / float64(st.total-st0.total)
	}
	fmt.Fprintf(w, "The run took %s; CPU steal over it (all CPUs) %.1f%%; load average at its end %s.\n",
		elapsed.Round(time.Second), steal, load)
}

// --- formatting

func commas(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func bigNum(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0) || x <= 0:
		return "?"
	case x < 1e7:
		return commas(int(math.Round(x)))
	}
	return fmt.Sprintf("%.2g", x)
}

// medRange formats the median and range of xs with format f.
func medRange(xs []float64, f string) string {
	if len(xs) == 1 {
		return fmt.Sprintf(f, xs[0])
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", bench.Median(xs), lo, hi)
}

func rateStr(xs []float64) string {
	if len(xs) == 1 {
		return commas(int(math.Round(xs[0])))
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	r := func(x float64) string { return commas(int(math.Round(x))) }
	return fmt.Sprintf("%s (%s–%s)", r(bench.Median(xs)), r(lo), r(hi))
}

// samples collects one configuration's measurements.
type samples struct {
	ms []bench.Measurement
}

func (s *samples) field(f func(bench.Measurement) float64) []float64 {
	var out []float64
	for _, m := range s.ms {
		out = append(out, f(m))
	}
	return out
}

func (s *samples) secs() []float64 {
	return s.field(func(m bench.Measurement) float64 { return m.Elapsed.Seconds() })
}
func (s *samples) rates() []float64 { return s.field(bench.Measurement.Rate) }
func (s *samples) cpuRates() []float64 {
	return s.field(bench.Measurement.CPURate)
}

// count is the interleaving count, flagged if it differed between rounds
// (explorations are deterministic unless a time budget cut them).
func (s *samples) count(f func(bench.Measurement) int) string {
	c := commas(f(s.ms[0]))
	for _, m := range s.ms[1:] {
		if f(m) != f(s.ms[0]) {
			xs := s.field(func(m bench.Measurement) float64 { return float64(f(m)) })
			return medRange(xs, "%.0f") + " (differs between rounds)"
		}
	}
	return c
}

func (s *samples) size() string {
	m := s.ms[0]
	if m.Complete {
		return commas(m.Interleavings) + " (complete)"
	}
	if m.Bug != "" {
		return "—"
	}
	return "≈ " + bigNum(m.EstimatedSize) + " (estimate)"
}

// --- the tables

func rate(w io.Writer, o options) {
	type key struct{ prog, variant int }
	got := map[key]*samples{}
	for r := 0; r < o.rounds; r++ {
		for p, prog := range bench.RatePrograms {
			for v, variant := range bench.Variants {
				k := key{p, v}
				if got[k] == nil {
					got[k] = &samples{}
				}
				got[k].ms = append(got[k].ms, run(bench.RateScenario(prog, variant, o.rateCap)))
			}
		}
	}
	fmt.Fprintf(w, "#### Interleavings per second (`--pp mutex_lock,mutex_unlock`, at most %s interleavings)\n\n", commas(o.rateCap))
	fmt.Fprintln(w, "| program | DPOR | interleavings | state space | vs dpor | transitions | seconds | interleavings/s | per CPU-second | rate vs dpor |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for p, prog := range bench.RatePrograms {
		base := got[key{p, 0}]
		for v, variant := range bench.Variants {
			s := got[key{p, v}]
			ratio, sizeRatio := "1", "1"
			if v > 0 {
				sizeRatio = fmt.Sprintf("%.1f", s.ms[0].EstimatedSize/base.ms[0].EstimatedSize)
				if !s.ms[0].Complete || !base.ms[0].Complete {
					sizeRatio = "≈ " + fmt.Sprintf("%.2g", s.ms[0].EstimatedSize/base.ms[0].EstimatedSize)
				}
				var rs []float64
				for i := range s.ms {
					rs = append(rs, s.ms[i].Rate()/base.ms[i].Rate())
				}
				ratio = medRange(rs, "%.2f")
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", prog, variant.Name,
				s.count(func(m bench.Measurement) int { return m.Interleavings }), s.size(), sizeRatio,
				s.count(func(m bench.Measurement) int { return m.Transitions }),
				medRange(s.secs(), "%.2f"), rateStr(s.rates()), rateStr(s.cpuRates()), ratio)
		}
	}
	fmt.Fprintln(w)
}

func bugs(w io.Writer, o options) {
	type row struct {
		f fixtures.Fixture
		s *samples
	}
	var rows, missed []row
	for _, f := range bench.BugFixtures() {
		if o.only != "" && !strings.Contains(f.Name, o.only) {
			continue
		}
		sc := bench.BugScenario(f, o.bugCap, o.bugBudget)
		s := &samples{ms: []bench.Measurement{run(sc)}}
		// A search that ends without the bug is not repeated: the
		// exploration is deterministic, and it takes the whole budget.
		if s.ms[0].Bug != "" {
			for r := 1; r < o.rounds; r++ {
				s.ms = append(s.ms, run(sc))
			}
		} else {
			missed = append(missed, row{f, s})
		}
		rows = append(rows, row{f, s})
	}
	fmt.Fprintf(w, "#### Time to the first bug (DPOR defaults; at most %s interleavings or %s)\n\n", commas(o.bugCap), o.bugBudget)
	fmt.Fprintln(w, "| fixture | expected | found | interleavings | transitions | seconds | data-race PPs in |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---|")
	for _, r := range rows {
		m := r.s.ms[0]
		found := m.Bug
		if found == "" {
			found = fmt.Sprintf("**not found** within %s interleavings (%s); state space ≈ %s", commas(m.Interleavings), stopWords(m), bigNum(m.EstimatedSize))
		} else if found != r.f.Expect {
			found = "**" + found + "** (not the expected kind)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.f.Name, r.f.Expect, found,
			r.s.count(func(m bench.Measurement) int { return m.Interleavings }),
			r.s.count(func(m bench.Measurement) int { return m.Transitions }),
			medRange(r.s.secs(), "%.3f"), strings.Join(r.f.RacePPFuncs, ", "))
	}
	fmt.Fprintln(w)
	if len(missed) == 0 {
		return
	}
	// Where DPOR's depth-first order misses a bug, say what finds it.
	others := []struct {
		name  string
		apply func(*bench.Scenario)
	}{
		{"iterative context bounding (--preemption-bound, no limit)", func(s *bench.Scenario) {
			s.DPOR.Strategy = "icb"
		}},
		{"--without thr_create,thr_exit,thr_join", func(s *bench.Scenario) { s.Without = bench.ThreadFuncs }},
	}
	fmt.Fprintln(w, "The same searches, for the bugs not found above, in other configurations (one run each):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| fixture | configuration | found | interleavings | seconds | preemptions in the bug's trace |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|")
	for _, r := range missed {
		for _, c := range others {
			sc := bench.BugScenario(r.f, o.bugCap, o.bugBudget)
			c.apply(&sc)
			m := run(sc)
			found := m.Bug
			switch {
			case found == "":
				found = fmt.Sprintf("not found (%s)", stopWords(m))
			case found != r.f.Expect:
				found = "**" + found + "** (not the expected kind): " + m.BugMessage
			}
			pre := "—"
			if m.Bug != "" {
				pre = strconv.Itoa(m.Preemptions)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %.3f | %s |\n", r.f.Name, c.name, found, commas(m.Interleavings), m.Elapsed.Seconds(), pre)
		}
	}
	fmt.Fprintln(w)
}

func stopWords(m bench.Measurement) string {
	switch m.Stopped {
	case dpor.StopBudget:
		return "time budget"
	case dpor.StopLimit:
		return "interleaving cap"
	case dpor.Continue:
		if m.Complete {
			return "state space complete"
		}
	}
	return m.Stopped.String()
}

func scaling(w io.Writer, o options) {
	type key struct {
		prog    string
		without bool
		n       int
	}
	got := map[key]*samples{}
	var keys []key
	for _, prog := range bench.ScalingPrograms {
		if o.only != "" && !strings.Contains(prog, o.only) {
			continue
		}
		for _, without := range []bool{false, true} {
			for n := 1; n <= o.maxN; n++ {
				keys = append(keys, key{prog, without, n})
			}
		}
	}
	for r := 0; r < o.rounds; r++ {
		for _, k := range keys {
			if got[k] == nil {
				got[k] = &samples{}
			}
			got[k].ms = append(got[k].ms, run(bench.ScalingScenario(k.prog, k.n, k.without, o.scaleCap, o.scaleBudget)))
		}
	}
	// One run with a larger cap for the state spaces that may complete.
	full := map[key]bench.Measurement{}
	for _, k := range keys {
		if m := got[k].ms[0]; !m.Complete && m.EstimatedSize <= 2*float64(o.fullCap) {
			full[k] = run(bench.ScalingScenario(k.prog, k.n, k.without, o.fullCap, o.fullBudget))
		}
	}
	fmt.Fprintf(w, "#### Scaling with the number of threads (default PP set; at most %s interleavings or %s)\n\n", commas(o.scaleCap), o.scaleBudget)
	fmt.Fprintf(w, "The last column is one run at most %s interleavings or %s long, made when the capped runs' estimate was at most %s.\n\n",
		commas(o.fullCap), o.fullBudget, commas(2*o.fullCap))
	fmt.Fprintln(w, "| program | N | PPs in thr_create/exit/join | interleavings run | state space | transitions | seconds | interleavings/s | completing it |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---|")
	for _, k := range keys {
		s := got[k]
		pps := "yes"
		if k.without {
			pps = "no (`--without`)"
		}
		completing := "—"
		if m, ok := full[k]; ok {
			if m.Complete {
				completing = fmt.Sprintf("%s interleavings in %.0f s (%s/s)", commas(m.Interleavings), m.Elapsed.Seconds(), commas(int(m.Rate())))
			} else {
				completing = fmt.Sprintf("not complete after %s interleavings, %.0f s (%s); ≈ %s", commas(m.Interleavings), m.Elapsed.Seconds(), stopWords(m), bigNum(m.EstimatedSize))
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", k.prog, k.n, pps,
			s.count(func(m bench.Measurement) int { return m.Interleavings }), s.size(),
			s.count(func(m bench.Measurement) int { return m.Transitions }),
			medRange(s.secs(), "%.2f"), rateStr(s.rates()), completing)
	}
	fmt.Fprintln(w)
}
