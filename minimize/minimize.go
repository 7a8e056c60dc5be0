package minimize

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"landslide/dpor"
	"landslide/emu/elfsym"
	"landslide/job"
	"landslide/kernel"
	"landslide/record"
	"landslide/report"
	"landslide/schedule"
)

// Input is a bug trace to minimize, with the job that found it.
type Input struct {
	// Config is the job: its Spec (PP set, limits, machine) and Image.
	// Of its Hooks, Now and Progress are used (for the search).
	Config job.Config
	// Signature is the bug's (job.Signature); Choices replay the trace,
	// which has Preemptions preemptions.
	Signature string
	Choices   []record.Choice
	// Preempted says per transition whether it began with a
	// preemption, Preemptions counts them (nil: computed from Choices).
	Preempted   []bool
	Preemptions int
	// Budget bounds the search for fewer preemptions (0: none); the
	// passing neighbour's search runs after it, bounded by MaxNeighbours.
	Budget time.Duration
	// Races are the exploration's race candidates, which the report's
	// data-race PPs name (nil: the search's own).
	Races []*job.RaceReport
	// MaxInterleavings bounds the search in interleavings (0: none), for
	// a caller whose clock counts them.
	MaxInterleavings int
	// MaxNeighbours bounds the reversals tried (0: DefaultMaxNeighbours).
	MaxNeighbours int
}

// DefaultMaxNeighbours is the number of reversals tried by default: each
// is one execution. MaxNeighbourSteps bounds the transitions they run in
// all (a count, not a time: the result does not depend on the machine's
// speed).
const (
	DefaultMaxNeighbours = 2000
	MaxNeighbourSteps    = 1_000_000
)

// Result is a minimized bug trace.
type Result struct {
	// The trace: the same bug with the fewest preemptions found.
	Choices     []record.Choice
	Transitions []*record.Transition
	Preempted   []bool
	Preemptions int
	Bug         *record.Bug
	// From is the original trace's preemptions; Same says the result
	// has as many (the search's first trace with the bug, or the
	// original itself when the search found none).
	From int
	Same bool
	// Proved: no interleaving of the PP set with fewer preemptions has
	// the bug (every one was run). Otherwise the search stopped (budget,
	// interrupt) after the interleavings with fewer than Below
	// preemptions, which do not have it.
	Proved bool
	Below  int
	// Searched counts the interleavings the search ran; Stopped says why
	// it stopped short ("" when it did not).
	Searched int
	Stopped  string
	// Neighbour is the nearest passing interleaving found (nil: none of
	// the Tried reversals passes).
	Neighbour *Neighbour
	Tried     int
	// Trace is the minimal trace's report, with Minimized filled in.
	Trace *report.Trace
}

// Neighbour is a passing interleaving one reversal away from the trace:
// the bug needs transition I's access to come before transition J's.
type Neighbour struct {
	I, J     int    // transitions of the minimal trace, I < J
	First    Access // I's access
	Second   Access // J's access
	Moved    int    // transitions of J's thread moved before I
	Choices  []record.Choice
	Text     string // "the bug needs thread 2's ... to come before thread 3's ..."
	Schedule string // the passing interleaving's choices (schedule.Format)
}

// Access is one side of a reversed pair, named.
type Access struct {
	Thread record.TID
	Write  bool
	Addr   uint64
	Data   string       // the data's name ("balance", "acct+4"), or ""
	Value  *uint64      // what it read or wrote in the failing trace (nil: not seen)
	Where  report.Frame // the instruction
	Source string       // its source line's text, when the file is at hand
}

// Minimize finds the bug of in with the fewest preemptions, then its
// nearest passing interleaving.
func Minimize(ctx context.Context, in Input) (*Result, error) {
	if in.Config.Linearizability {
		// Such a bug is the judge's verdict on a whole interleaving,
		// which the reversals' executions do not consult.
		return nil, errors.New("minimize: linearizability violations are not minimized")
	}
	k, err := kernel.New(in.Config.Image, in.Config.Spec.KernelConfig())
	if err != nil {
		return nil, err
	}
	syms := k.Symbols()
	start := k.Snapshot()
	want := func(b *record.Bug) bool {
		_, sig := job.Signature(syms, b)
		return sig == in.Signature
	}
	if in.Preempted == nil {
		if in.Preempted, err = Preemptions(k, start, in.Choices); err != nil {
			return nil, err
		}
		in.Preemptions = Count(in.Preempted)
	}
	res := &Result{From: in.Preemptions}
	spec := in.Config.Spec
	spec.Spec = dpor.Spec{Strategy: "icb", MaxBound: dpor.Bound(in.Preemptions),
		AbortCodes: spec.AbortCodes, STM: spec.STM, WeakAtomicity: spec.WeakAtomicity}
	spec.Budget, spec.MaxInterleavings = in.Budget, in.MaxInterleavings
	jr, err := job.Run(ctx, job.Config{Spec: spec, Image: in.Config.Image,
		Hooks: job.Hooks{Now: in.Config.Now, Progress: in.Config.Progress, Wanted: want}})
	if err != nil {
		return nil, fmt.Errorf("minimize: %w", err)
	}
	res.Searched = jr.Executed
	pre := in.Preempted
	if b := jr.BugBranch; b != nil {
		// The first interleaving with the bug: rounds with fewer
		// preemptions completed before it without it.
		res.Choices, pre, res.Preemptions = slices.Clone(b.Choices), slices.Clone(b.Preempted), b.Preemptions
		res.Proved, res.Below = jr.Budgeted == 0, b.Preemptions
		res.Same = b.Preemptions == in.Preemptions
	} else {
		res.Choices, res.Preemptions, res.Same = slices.Clone(in.Choices), in.Preemptions, true
		if jr.Stopped == dpor.Continue || jr.Stopped == dpor.StopBound {
			// Every interleaving within the original's bound ran
			// without the bug, which the original's replay below must
			// then show: the preemptions were counted otherwise.
			res.Stopped = "no interleaving of the search had the bug"
		} else {
			res.Stopped = jr.Stopped.String()
			res.Below = jr.Bound // the rounds below it completed
		}
	}
	// Re-execute the trace: its transitions, and who could run where.
	trs, runnable, bug, err := execute(k, start, res.Choices)
	if err != nil {
		return nil, err
	}
	if bug == nil || !want(bug) {
		return nil, fmt.Errorf("minimize: the trace (%s) does not end with the bug %s", schedule.Format(res.Choices), in.Signature)
	}
	res.Transitions, res.Preempted, res.Bug = trs, pre, bug
	max := in.MaxNeighbours
	if max <= 0 {
		max = DefaultMaxNeighbours
	}
	res.Neighbour, res.Tried = neighbour(ctx, k, start, syms, res.Choices, trs, runnable, max)
	races := in.Races
	if races == nil {
		races = jr.Races
	}
	res.Trace = job.NewTrace(in.Config, syms, jr.PPSet, races, bug, trs, res.Choices, pre, res.Searched, jr.Estimate)
	res.Trace.Minimized = res.report()
	if n := res.Neighbour; n != nil {
		res.Trace.Steps[n.I].Order = fmt.Sprintf("the bug needs this before #%d (%s)", n.J, accessText(n.Second))
		res.Trace.Steps[n.J].Order = fmt.Sprintf("the bug needs this after #%d (%s)", n.I, accessText(n.First))
	}
	return res, nil
}

// report is the trace report's account of the minimization.
func (r *Result) report() *report.Minimized {
	m := &report.Minimized{From: r.From, Proved: r.Proved, Below: r.Below, Searched: r.Searched, Stopped: r.Stopped, Tried: r.Tried}
	if r.Neighbour != nil {
		m.Needs = r.Neighbour.Text
		m.Passing = r.Neighbour.Schedule
	}
	return m
}

// execute runs choices from start: the transitions, the threads that
// could run at each PP, and the bug.
func execute(k *kernel.Kernel, start record.Snapshot, choices []record.Choice) ([]*record.Transition, [][]record.TID, *record.Bug, error) {
	k.Restore(start)
	var trs []*record.Transition
	var runnable [][]record.TID
	for i, c := range choices {
		if done, _ := k.Ended(); done {
			return nil, nil, nil, fmt.Errorf("minimize: the program ended after %d of the trace's %d transitions", i, len(choices))
		}
		runnable = append(runnable, k.Runnable())
		tr, err := k.Step(c)
		if err != nil && !errors.Is(err, record.ErrBudget) {
			return nil, nil, nil, fmt.Errorf("minimize: transition %d (thread %d): %w", i, c.Thread, err)
		}
		trs = append(trs, tr)
	}
	_, bug := k.Ended()
	return trs, runnable, bug, nil
}

// reversal is a candidate: at node i, thread of j runs first, up to j.
type reversal struct {
	i, j   int
	ai, aj record.Access
	moved  int
}

// conflict returns a pair of conflicting accesses of a and b (a common
// byte, one of them writing it).
func conflict(a, b *record.Transition) (record.Access, record.Access, bool) {
	var fx, fy record.Access
	found := false
	bs := slices.Concat(b.Accesses, b.Own) // once, not per access of a
	for _, x := range slices.Concat(a.Accesses, a.Own) {
		for _, y := range bs {
			if (x.Write || y.Write) && x.Addr < y.Addr+uint64(y.Size) && y.Addr < x.Addr+uint64(x.Size) {
				if !x.Atomic && !y.Atomic {
					return x, y, true
				}
				if !found {
					fx, fy, found = x, y, true
				}
			}
		}
	}
	return fx, fy, found
}

// candidates lists the reversals of trs: for each transition i and each
// other thread q that could run at i, the first transition j > i of q
// that conflicts with i.
func candidates(trs []*record.Transition, runnable [][]record.TID) []reversal {
	var out []reversal
	for i, ti := range trs {
		for _, q := range runnable[i] {
			if q == ti.Thread {
				continue
			}
			moved := 0
			for j := i + 1; j < len(trs); j++ {
				if trs[j].Thread != q {
					continue
				}
				moved++
				if ai, aj, ok := conflict(ti, trs[j]); ok {
					out = append(out, reversal{i: i, j: j, ai: ai, aj: aj, moved: moved})
					break
				}
			}
		}
	}
	// Plain accesses first (an atomic one is most often a lock's word:
	// "the bug needs thread 2 to take the lock first" explains little),
	// then the fewest transitions moved, then the latest in the trace.
	slices.SortStableFunc(out, func(a, b reversal) int {
		if x, y := a.ai.Atomic || a.aj.Atomic, b.ai.Atomic || b.aj.Atomic; x != y {
			if x {
				return 1
			}
			return -1
		}
		if a.moved != b.moved {
			return a.moved - b.moved
		}
		return b.j - a.j
	})
	return out
}

// neighbour tries the reversals in order and returns the first after
// which the program ends without a bug.
func neighbour(ctx context.Context, k *kernel.Kernel, start record.Snapshot, syms *elfsym.Symbols,
	choices []record.Choice, trs []*record.Transition, runnable [][]record.TID, max int) (*Neighbour, int) {
	tried, steps := 0, 0
	for _, c := range candidates(trs, runnable) {
		if tried >= max || steps >= MaxNeighbourSteps || ctx.Err() != nil {
			break
		}
		tried++
		q := trs[c.j].Thread
		pref := slices.Clone(choices[:c.i])
		var rest []record.Choice
		left := c.moved
		for x := c.i; x < len(choices); x++ {
			if choices[x].Thread == q && left > 0 {
				pref = append(pref, choices[x])
				left--
				continue
			}
			rest = append(rest, choices[x])
		}
		pref = append(pref, rest...)
		got, ran, ok := guided(k, start, pref, 4*len(choices)+1000)
		steps += ran
		if !ok {
			continue
		}
		n := &Neighbour{I: c.i, J: c.j, Moved: c.moved, Choices: got, Schedule: schedule.Format(got),
			First: name(k, start, choices, c.i, syms, trs[c.i].Thread, c.ai), Second: name(k, start, choices, c.j, syms, q, c.aj)}
		n.Text = fmt.Sprintf("the bug needs %s to come before %s: run the other way round (thread %d first at #%d), the program ends without it",
			accessText(n.First), accessText(n.Second), q, c.i)
		return n, tried
	}
	return nil, tried
}

// guided runs pref from start as far as the threads can: at each PP the
// first choice of pref whose thread can run (taken out of pref), else the
// machine's default. It reports the choices made, the transitions run,
// and whether the program ended without a bug within max transitions.
func guided(k *kernel.Kernel, start record.Snapshot, pref []record.Choice, max int) ([]record.Choice, int, bool) {
	k.Restore(start)
	pref = slices.Clone(pref)
	var made []record.Choice
	for n := 0; n < max; n++ {
		if done, bug := k.Ended(); done {
			return made, n, bug == nil && !k.Blocked()
		}
		run := k.Runnable()
		c := k.Default()
		for x, p := range pref {
			if slices.Contains(run, p.Thread) {
				c = p
				pref = slices.Delete(pref, x, x+1)
				break
			}
		}
		if _, err := k.Step(c); err != nil {
			return nil, n, false
		}
		made = append(made, c)
	}
	return nil, max, false
}

// name describes access a of transition i of choices, its data named
// as the machine has it right after that transition (a heap block by
// where it was allocated, a stack by its thread).
func name(k *kernel.Kernel, start record.Snapshot, choices []record.Choice, i int, syms *elfsym.Symbols, t record.TID, a record.Access) Access {
	k.Restore(start)
	var value *uint64
	for x, c := range choices[:i+1] {
		var err error
		if x == i {
			var got map[uint64]uint64
			if _, got, err = k.StepValues(c, []uint64{a.PC}); err == nil || errors.Is(err, record.ErrBudget) {
				if v, ok := got[a.PC]; ok {
					value = &v
				}
			}
		} else {
			_, err = k.Step(c)
		}
		if err != nil && !errors.Is(err, record.ErrBudget) {
			break
		}
	}
	f := report.Frames(syms, []uint64{a.PC})[0]
	return Access{Thread: t, Write: a.Write, Addr: a.Addr, Data: k.DataName(a.Addr), Value: value, Where: f, Source: sourceLine(f.File, f.Line)}
}

// accessText: "thread 2's write of balance (storing 6) at deposit
// (bank.c:15) `balance = b`".
func accessText(a Access) string {
	kind := "read"
	if a.Write {
		kind = "write"
	}
	data := a.Data
	if data == "" {
		data = fmt.Sprintf("%#x", a.Addr)
	}
	if a.Value != nil {
		verb := "got"
		if a.Write {
			verb = "storing"
		}
		data += fmt.Sprintf(" (%s %s)", verb, job.ValueText(*a.Value))
	}
	s := fmt.Sprintf("thread %d's %s of %s at %s", a.Thread, kind, data, a.Where.Text)
	if a.Source != "" {
		s += " `" + a.Source + "`"
	}
	return s
}

// sourceLine is line n of file, trimmed, when the file is at hand (and
// not huge); "" otherwise.
func sourceLine(file string, n int) string {
	if file == "" || n <= 0 {
		return ""
	}
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 4<<20 {
		return ""
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if n > len(lines) {
		return ""
	}
	s := strings.TrimSpace(lines[n-1])
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// Preemptions runs choices from start and says which transitions began
// with a preemption, as the explorer counts them: the previous
// transition's thread could have gone on, did not give the CPU away
// (voluntary), and another thread runs.
func Preemptions(k *kernel.Kernel, start record.Snapshot, choices []record.Choice) ([]bool, error) {
	k.Restore(start)
	out := make([]bool, len(choices))
	var last *record.Transition
	for i, c := range choices {
		if done, _ := k.Ended(); done {
			return nil, fmt.Errorf("minimize: the program ended after %d of the trace's %d transitions", i, len(choices))
		}
		out[i] = last != nil && c.Thread != last.Thread && !voluntary(last.PP.Kind) && slices.Contains(k.Runnable(), last.Thread)
		tr, err := k.Step(c)
		if err != nil && !errors.Is(err, record.ErrBudget) {
			return nil, fmt.Errorf("minimize: transition %d (thread %d): %w", i, c.Thread, err)
		}
		last = tr
	}
	return out, nil
}

// Count counts the preemptions of a trace's flags (true ones).
func Count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// voluntary: a transition ending at such a PP gives the CPU away, so the
// next one begins no preemption (dpor's rule).
func voluntary(k record.PPKind) bool {
	switch k {
	case record.PPYield, record.PPBlock, record.PPExit, record.PPSleep:
		return true
	}
	return false
}
