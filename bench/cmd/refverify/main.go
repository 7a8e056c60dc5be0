// Command refverify runs `landslide explore PROGRAM --pp mutex_lock,mutex_unlock`
// (through the command line's own code, with its default budget, store and
// everything else) on every test program built against the reference
// thread library that is expected to pass, and prints a Markdown table:
// whether each state space completed with no bug (verified), in how many
// interleavings, with which PP set, and how long it took. It is the
// evidence for the exploration issue's "the reference library verifies on
// each shipped test within the default budget" (BENCHMARKS.md,
// "Reference verification").
//
//	go run ./bench/cmd/refverify -j 2 > /tmp/refverify.md
//
// Each exploration runs in this process with a store in a temporary
// directory; -j runs that many at once. Progress goes to stderr. The exit
// status is 1 if any test did not verify.
//
// With -quicksand it checks Quicksand's total verification instead (the
// Quicksand issue: "a correct library is totally verified on mutex_test
// and paradise_lost with both --hb modes"): `landslide quicksand
// fixtures/bin/ref/TEST.elf --hb H -c C --budget B` for each test of
// -tests and each mode of -hb, one after the other:
//
//	go run ./bench/cmd/refverify -quicksand -tests mutex_test,paradise_lost -c 2 -budget 30m
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"landslide/cli"
	"landslide/fixtures"
)

// doc is the part of explore's --json document the table shows.
type doc struct {
	Result        string   `json:"result"`
	Interleavings int      `json:"interleavings"`
	Verified      bool     `json:"verified"`
	Elapsed       float64  `json:"elapsed_seconds"`
	PPSet         []string `json:"pp_set"`
}

type outcome struct {
	name string
	code int
	doc  doc
	wall time.Duration
	err  string
}

func main() {
	jobs := flag.Int("j", 1, "explorations run at once")
	only := flag.String("only", "", "only tests whose name contains this")
	qs := flag.Bool("quicksand", false, "check Quicksand's total verification instead (see the package comment)")
	qsTests := flag.String("tests", "mutex_test,paradise_lost", "with -quicksand: the reference tests")
	qsHB := flag.String("hb", "limited,pure", "with -quicksand: the data-race analyses")
	qsCPUs := flag.Int("c", 2, "with -quicksand: workers")
	qsBudget := flag.Duration("budget", time.Hour, "with -quicksand: the budget of each run")
	flag.Parse()
	if *jobs < 1 {
		fmt.Fprintln(os.Stderr, "refverify: -j must be at least 1")
		os.Exit(2)
	}
	if err := os.Chdir(fixtures.Root()); err != nil {
		fmt.Fprintln(os.Stderr, "refverify:", err)
		os.Exit(2)
	}
	if *qs {
		os.Exit(quicksandTable(strings.Split(*qsTests, ","), strings.Split(*qsHB, ","), *qsCPUs, *qsBudget))
	}
	var tests []fixtures.Fixture
	for _, f := range fixtures.All() {
		if f.Lib == "ref" && f.Expect == "ok" && strings.HasPrefix(f.Name, "ref/") && strings.Contains(f.Name, *only) {
			tests = append(tests, f)
		}
	}
	tmp, err := os.MkdirTemp("", "refverify")
	if err != nil {
		fmt.Fprintln(os.Stderr, "refverify:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(tmp)

	start := time.Now()
	out := make([]outcome, len(tests))
	sem := make(chan struct{}, *jobs)
	var wg sync.WaitGroup
	for i, f := range tests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = explore(f, fmt.Sprintf("%s/store%d", tmp, i))
			o := out[i]
			fmt.Fprintf(os.Stderr, "refverify: %s: exit %d, %d interleavings, %s\n", f.Name, o.code, o.doc.Interleavings, o.wall.Round(time.Second))
		}()
	}
	wg.Wait()

	failed := false
	fmt.Printf("`go run ./bench/cmd/refverify -j %d` at %s on %s/%s, %d CPUs; each row is\n", *jobs, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Printf("`landslide explore fixtures/bin/ref/TEST.elf --pp mutex_lock,mutex_unlock` (default budget %s); %s wall time in all.\n\n", cli.DefaultBudget, time.Since(start).Round(time.Second))
	fmt.Println("| test | result | interleavings | wall time | PP set |")
	fmt.Println("|---|---|---:|---:|---|")
	for _, o := range out {
		res := o.doc.Result
		if o.doc.Verified && o.code == cli.ExitOK {
			res = "**verified**"
		} else {
			failed = true
			if o.err != "" {
				res = "error: " + o.err
			}
		}
		fmt.Printf("| %s | %s | %d | %s | %s |\n", o.name, res, o.doc.Interleavings, o.wall.Round(100*time.Millisecond), strings.Join(o.doc.PPSet, ", "))
	}
	if failed {
		os.Exit(1)
	}
}

// explore runs one exploration through the command line, as a user would.
func explore(f fixtures.Fixture, store string) outcome {
	var stdout, stderr bytes.Buffer
	args := []string{"explore", f.Output, "--pp", "mutex_lock,mutex_unlock", "--json", "--quiet", "--store", store, "--trace-dir", store}
	t0 := time.Now()
	code := cli.Main(args, &stdout, &stderr)
	o := outcome{name: f.Name, code: code, wall: time.Since(t0)}
	if err := json.Unmarshal(stdout.Bytes(), &o.doc); err != nil {
		o.err = strings.TrimSpace(stderr.String())
		if o.err == "" {
			o.err = err.Error()
		}
	}
	return o
}

// qsDoc is the part of quicksand's --json document the table shows.
type qsDoc struct {
	Result            string  `json:"result"`
	TotalVerification bool    `json:"total_verification"`
	Elapsed           float64 `json:"elapsed"`
	CPU               float64 `json:"cpu_seconds"`
	Saturation        float64 `json:"core_saturation"`
	Jobs              []struct {
		Status string `json:"status"`
		PPSet  string `json:"pp_set"`
	} `json:"jobs"`
	Uncovered []string `json:"uncovered_race_pps"`
}

// quicksandTable runs Quicksand on each test under each mode and prints
// whether it totally verified; it returns the exit status.
func quicksandTable(tests, modes []string, cpus int, budget time.Duration) int {
	fmt.Printf("`go run ./bench/cmd/refverify -quicksand -tests %s -hb %s -c %d -budget %s` at %s on %s/%s, %d CPUs; each row is\n",
		strings.Join(tests, ","), strings.Join(modes, ","), cpus, budget, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Printf("`landslide quicksand fixtures/bin/ref/TEST.elf --hb HB -c %d --budget %s --no-store`.\n\n", cpus, budget)
	fmt.Println("| test | --hb | result | jobs (complete) | data-race PPs in the maximal set | wall time | CPU time | core saturation |")
	fmt.Println("|---|---|---|---:|---:|---:|---:|---:|")
	status := 0
	for _, test := range tests {
		f, ok := fixtures.Lookup("ref/" + test)
		if !ok {
			fmt.Fprintf(os.Stderr, "refverify: no fixture ref/%s\n", test)
			return 2
		}
		for _, hb := range modes {
			var stdout, stderr bytes.Buffer
			t0 := time.Now()
			code := cli.Main([]string{"quicksand", f.Output, "--hb", hb, "-c", fmt.Sprint(cpus), "--budget", budget.String(),
				"--no-store", "--json", "--quiet", "--trace-dir", os.TempDir()}, &stdout, &stderr)
			wall := time.Since(t0)
			var d qsDoc
			if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
				fmt.Printf("| %s | %s | error: %s | | | | | |\n", test, hb, strings.TrimSpace(stderr.String()))
				status = 1
				continue
			}
			complete, maxRaces := 0, 0
			for _, j := range d.Jobs {
				if j.Status == "complete" {
					complete++
					maxRaces = max(maxRaces, strings.Count(j.PPSet, "data race @"))
				}
			}
			res := d.Result
			if d.TotalVerification && code == cli.ExitOK {
				res = "**total verification**"
			} else {
				status = 1
			}
			fmt.Printf("| %s | %s | %s | %d (%d) | %d | %s | %.0fs | %.0f%% |\n", test, hb, res, len(d.Jobs), complete, maxRaces,
				wall.Round(time.Second), d.CPU, 100*d.Saturation)
			fmt.Fprintf(os.Stderr, "refverify: quicksand %s --hb %s: exit %d in %s\n", test, hb, code, wall.Round(time.Second))
		}
	}
	return status
}
