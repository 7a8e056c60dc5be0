// Command classcmp explores one program under two strategies to
// completion, running past bugs, and compares what they reached: the
// Mazurkiewicz trace of every execution (dpor.Branch.Class) and its
// outcome (a clean end with the program's output, or the bug's kind and
// message). It prints the counts, each side's traces and outcomes the
// other did not reach, and the first few executions only -a reached.
// It measured optimal DPOR against the dpor strategy on ref/paraguay and
// on the variants in testdata (BENCHMARKS.md, "Exploration rate and the
// default DPOR's redundancy"):
//
//	go run ./cmd/landslide cc -o /tmp/pg4.elf bench/cmd/classcmp/testdata/pg4.c
//	go run ./bench/cmd/classcmp /tmp/pg4.elf
//	GOMAXPROCS=1 go run ./bench/cmd/classcmp fixtures/bin/ref/paraguay.elf   # about 8 minutes
//	GOMAXPROCS=1 go run ./bench/cmd/classcmp -thesis-heuristics fixtures/bin/ref/paraguay.elf
//
// The PP set is --pp's (default mutex_lock,mutex_unlock), with the
// program's LANDSLIDE_CONFIG directives, as `landslide explore --pp`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"landslide/dpor"
	"landslide/job"
	"landslide/kernel"
)

// side is what one strategy's exploration reached.
type side struct {
	res      *dpor.Result
	traces   map[[16]byte]bool
	outcomes map[string]int
}

// explore runs strategy on a fresh machine to completion, past bugs;
// each ended execution's class goes to the side, and to seen (nil: not
// wanted), which reports whether to describe it.
func explore(img []byte, cfg kernel.Config, strategy string, seen func(*dpor.Branch, [16]byte) bool) (*side, error) {
	k, err := kernel.New(img, cfg)
	if err != nil {
		return nil, err
	}
	s := &side{traces: map[[16]byte]bool{}, outcomes: map[string]int{}}
	opt := dpor.Options{Spec: dpor.Spec{Strategy: strategy, KeepGoing: true}}
	opt.OnBranch = func(b *dpor.Branch) dpor.Stop {
		if b.SleepBlocked || b.Blocked || b.Budget || b.SelfAbort {
			return dpor.Continue // not an end state of the program
		}
		c := b.Class()
		s.traces[c] = true
		out := "end: " + strings.TrimSpace(string(k.Output()))
		if b.Bug != nil {
			out = b.Bug.Kind.String() + ": " + b.Bug.Message
		}
		s.outcomes[out]++
		if seen != nil && seen(b, c) {
			fmt.Printf("  only under %s, execution %d: %s\n", strategy, b.N, describe(b))
		}
		return dpor.Continue
	}
	x, err := dpor.New(k, opt)
	if err != nil {
		return nil, err
	}
	if s.res, err = x.Run(context.Background()); err != nil {
		return nil, err
	}
	return s, nil
}

// describe is an execution as thread/PP of each transition.
func describe(b *dpor.Branch) string {
	var parts []string
	for i, tr := range b.Transitions {
		p := fmt.Sprintf("%d/%s", tr.Thread, tr.PP)
		if v := b.Choices[i].Value; v != 0 {
			p += fmt.Sprintf(":%d", v)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

func main() {
	a := flag.String("a", "dpor", "the strategy whose traces are checked against -b's")
	b := flag.String("b", "optimal", "the other strategy")
	pps := flag.String("pp", "mutex_lock,mutex_unlock", "the PP set, as landslide explore --pp")
	show := flag.Int("show", 3, "executions to print whose trace only -a reached")
	thesis := flag.Bool("thesis-heuristics", false, "the thesis's loop heuristics in place of the spin-loop rule (landslide explore --thesis-heuristics)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: classcmp [-a dpor] [-b optimal] [-pp FUNCS] [-thesis-heuristics] [-show N] PROGRAM.elf")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *a, *b, job.PPRequest{PPs: strings.Split(*pps, ","), ThesisHeuristics: *thesis}, *show); err != nil {
		fmt.Fprintln(os.Stderr, "classcmp:", err)
		os.Exit(2)
	}
}

func run(path, a, b string, req job.PPRequest, show int) error {
	img, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r, err := job.ResolvePPs(img, req)
	if err != nil {
		return err
	}
	sb, err := explore(img, r.Kernel, b, nil)
	if err != nil {
		return err
	}
	shown := 0
	sa, err := explore(img, r.Kernel, a, func(_ *dpor.Branch, c [16]byte) bool {
		if sb.traces[c] || shown >= show {
			return false
		}
		shown++
		return true
	})
	if err != nil {
		return err
	}
	for _, s := range []struct {
		name string
		x    *side
	}{{a, sa}, {b, sb}} {
		fmt.Printf("%s: %d executions (%d sleep-set blocked), %d traces, %d outcomes\n",
			s.name, s.x.res.Executed, s.x.res.SleepBlocked, len(s.x.traces), len(s.x.outcomes))
	}
	fmt.Printf("traces only under %s: %d; only under %s: %d\n", a, missing(sa.traces, sb.traces), b, missing(sb.traces, sa.traces))
	for _, p := range [][2]*side{{sa, sb}, {sb, sa}} {
		name := a
		if p[0] == sb {
			name = b
		}
		var outs []string
		for o := range p[0].outcomes {
			if p[1].outcomes[o] == 0 {
				outs = append(outs, o)
			}
		}
		slices.Sort(outs)
		for _, o := range outs {
			fmt.Printf("outcome only under %s (%d executions): %s\n", name, p[0].outcomes[o], o)
		}
	}
	return nil
}

// missing counts the traces of x not in y.
func missing(x, y map[[16]byte]bool) int {
	n := 0
	for c := range x {
		if !y[c] {
			n++
		}
	}
	return n
}
