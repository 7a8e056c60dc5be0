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
	flag.Parse()
	if *jobs < 1 {
		fmt.Fprintln(os.Stderr, "refverify: -j must be at least 1")
		os.Exit(2)
	}
	if err := os.Chdir(fixtures.Root()); err != nil {
		fmt.Fprintln(os.Stderr, "refverify:", err)
		os.Exit(2)
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
