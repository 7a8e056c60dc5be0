package job

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"

	"landslide/dpor"
	"landslide/kernel"
	"landslide/linearize"
	"landslide/record"
)

// Linearizability checking (Spec.Linearizability; sdk's lineup.h): the
// job first learns the program's sequential specification, running it
// with its calls one at a time in every order (learnSpec), then checks
// every interleaving's history against it (lineupJudge).

// MaxSerialRuns bounds the runs that learn a sequential specification.
const MaxSerialRuns = 200_000

// MaxSerialInstructions bounds one run of the calls one at a time: a
// call that does not return within it is reported (there is no PP to
// find its loop by).
const MaxSerialInstructions = 100_000_000

// maxVerdicts bounds the verdicts a job remembers (by history).
const maxVerdicts = 1 << 16

// learnSpec runs the program with its calls one at a time: the kernel
// runs each call whole in one transition and makes every two calls
// conflict (kernel.Config.LineupSerial), and only the PPs every program
// has stay, so the default DPOR runs each order of the calls once
// (job.TestSpecHasEveryOrder: 1,680 runs for the 1,680 orders of 3×3).
//
// A specification depends on the program and this serial configuration
// only: one learned in the process is reused (learned), so the jobs of a
// Quicksand run on one program, or the strategies a test compares, learn
// it once.
func learnSpec(ctx context.Context, cfg Config) (*linearize.Spec, error) {
	kc := cfg.Spec.KernelConfig()
	kc.LineupSerial = true
	kc.SyncPPs, kc.DataRacePCs, kc.Filters = []string{}, nil, nil
	kc.EveryAccess, kc.ModelThreads = false, false
	if kc.MaxInstructions == 0 || kc.MaxInstructions > MaxSerialInstructions {
		kc.MaxInstructions = MaxSerialInstructions
	}
	key := fmt.Sprintf("%x %#v", sha256.Sum256(cfg.Image), kc)
	if spec := learned.get(key); spec != nil {
		return spec, nil
	}
	spec, err := learnSpecOf(ctx, cfg.Image, kc)
	if err == nil {
		learned.put(key, spec)
	}
	return spec, err
}

// learned holds the specifications learnSpec learned, by program and
// configuration, the last maxLearned of them. A Spec is read-only once
// learned (Check reads it), so jobs running at once may share one.
var learned specCache

// maxLearned is small: a specification may hold up to MaxSerialRuns
// orders, and a process's jobs on one program need one.
const maxLearned = 4

type specCache struct {
	mu    sync.Mutex
	specs map[string]*linearize.Spec
	keys  []string // oldest first
}

func (c *specCache) get(key string) *linearize.Spec {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.specs[key]
}

// clear forgets every specification (tests).
func (c *specCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.specs, c.keys = nil, nil
}

func (c *specCache) put(key string, spec *linearize.Spec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.specs == nil {
		c.specs = map[string]*linearize.Spec{}
	}
	if _, ok := c.specs[key]; ok {
		return
	}
	if len(c.keys) == maxLearned {
		delete(c.specs, c.keys[0])
		c.keys = c.keys[1:]
	}
	c.specs[key] = spec
	c.keys = append(c.keys, key)
}

// learnSpecOf learns the specification of image under the serial
// configuration kc.
func learnSpecOf(ctx context.Context, image []byte, kc kernel.Config) (*linearize.Spec, error) {
	k, err := kernel.New(image, kc)
	if err != nil {
		return nil, err
	}
	spec := &linearize.Spec{}
	var fail error
	opt := dpor.Options{Spec: dpor.Spec{MaxInterleavings: MaxSerialRuns}}
	opt.OnBranch = func(b *dpor.Branch) dpor.Stop {
		if b.SleepBlocked || b.SelfAbort {
			return dpor.Continue
		}
		calls, _, _ := lineupCalls(b.Transitions)
		order := linearize.Order(calls)
		switch {
		case b.Bug != nil:
			fail = fmt.Errorf("with the calls one at a time, in the order %s, the program fails: %s: %s (landslide run --schedule %s shows it)", order, b.Bug.Kind, b.Bug.Message, choiceList(b.Choices))
		case b.Limit != nil:
			fail = fmt.Errorf("with the calls one at a time, in the order %s, the execution went past a limit of the checker: %s", order, b.Limit.Message)
		case b.Budget:
			fail = fmt.Errorf("with the calls one at a time, in the order %s, the program ran out of instructions (%d): a call that never returns?", order, MaxSerialInstructions)
		case overlap(b.Transitions):
			fail = fmt.Errorf("with the calls one at a time, in the order %s, a call blocked and another thread's call ran: calls that wait for each other have no sequential specification", order)
		default:
			if err := spec.Add(calls); err != nil {
				fail = err
			}
		}
		if fail != nil {
			return dpor.StopControl
		}
		return dpor.Continue
	}
	x, err := dpor.New(k, opt)
	if err != nil {
		return nil, err
	}
	res, err := x.Run(ctx)
	switch {
	case err != nil:
		return nil, err
	case fail != nil:
		return nil, fmt.Errorf("linearizability: learning the sequential specification: %w", fail)
	case res.Stopped == dpor.StopLimit:
		return nil, fmt.Errorf("linearizability: learning the sequential specification: more than %d runs of the calls one at a time; use fewer calls", MaxSerialRuns)
	case res.Stopped == dpor.StopCanceled:
		return nil, ctx.Err()
	case spec.Orders() == 0:
		return nil, fmt.Errorf("linearizability: the program declares no calls (lineup_call and lineup_return, sdk's lineup.h)")
	}
	return spec, nil
}

// lineupCalls reads the calls of a branch from its sync events: each
// call in the order it began, and its first and last transitions.
func lineupCalls(trs []*record.Transition) (calls []linearize.Call, first, last []int) {
	open := map[record.TID]int{}
	count := map[record.TID]int{}
	for i, tr := range trs {
		for _, e := range tr.Sync {
			switch e.Kind {
			case record.SyncOpCall:
				open[tr.Thread] = len(calls)
				calls = append(calls, linearize.Call{Thread: tr.Thread, Index: count[tr.Thread], Op: e.Op, Arg: e.Arg})
				count[tr.Thread]++
				first = append(first, i)
				last = append(last, i)
			case record.SyncOpReturn:
				if c, ok := open[tr.Thread]; ok {
					calls[c].Result, calls[c].Done = e.Arg, true
					last[c] = i
					delete(open, tr.Thread)
				}
			}
		}
	}
	return calls, first, last
}

// overlap reports whether a call began while another was open.
func overlap(trs []*record.Transition) bool {
	open := 0
	for _, tr := range trs {
		for _, e := range tr.Sync {
			switch e.Kind {
			case record.SyncOpCall:
				if open++; open > 1 {
					return true
				}
			case record.SyncOpReturn:
				open--
			}
		}
	}
	return false
}

func choiceList(cs []record.Choice) string {
	var parts []string
	for _, c := range cs {
		s := fmt.Sprint(c.Thread)
		if c.Value != 0 {
			s += fmt.Sprintf(":%d", c.Value)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// lineupJudge checks each interleaving's history against spec; verdicts
// are remembered by history (calls, results and dependencies), which
// equivalent interleavings share.
func lineupJudge(spec *linearize.Spec) func(*dpor.Branch) *record.Bug {
	seen := map[string]*record.Bug{}
	return func(b *dpor.Branch) *record.Bug {
		h, key, trs, last := branchHistory(b)
		if bug, ok := seen[key]; ok {
			return bug
		}
		bug := judge(spec, h, trs, last)
		if len(seen) < maxVerdicts {
			seen[key] = bug
		}
		return bug
	}
}

// branchHistory is the history of the branch, with a key that identifies
// it (the calls, their results and dependencies), and each call's last
// transition.
func branchHistory(b *dpor.Branch) (h *linearize.History, key string, trs []*record.Transition, last []int) {
	calls, first, last := lineupCalls(b.Transitions)
	n := len(calls)
	h = &linearize.History{Calls: calls, After: matrix(n), Precedes: matrix(n), StartsAfter: matrix(n), EndsAfter: matrix(n)}
	var k strings.Builder
	for i := range calls {
		fmt.Fprintf(&k, "%d.%d:%s(%d)=%d,%v;", calls[i].Thread, calls[i].Index, calls[i].Op, calls[i].Arg, calls[i].Result, calls[i].Done)
	}
	for i := range calls {
		for j := range calls {
			if i == j || calls[i].Thread == calls[j].Thread {
				k.WriteByte('-')
				continue
			}
			// Happens-before between the calls' first and last
			// transitions: some transition of j happens after some
			// transition of i exactly when j's last one happens after
			// i's first (After); j begins after i returns in every
			// equivalent interleaving when j's first one happens after
			// i's last (Precedes). (A call's first transition holds the
			// code before lineup_call too: a call is taken as longer,
			// never shorter.)
			h.After[i][j] = b.HappensAfter(first[i], last[j])
			h.Precedes[i][j] = b.HappensAfter(last[i], first[j])
			h.StartsAfter[i][j] = b.HappensAfter(first[i], first[j])
			h.EndsAfter[i][j] = b.HappensAfter(last[i], last[j])
			bits := 0
			for x, v := range []bool{h.After[i][j], h.Precedes[i][j], h.StartsAfter[i][j], h.EndsAfter[i][j]} {
				if v {
					bits |= 1 << x
				}
			}
			k.WriteByte("0123456789abcdef"[bits])
		}
	}
	return h, k.String(), b.Transitions, last
}

func matrix(n int) [][]bool {
	m := make([][]bool, n)
	for i := range m {
		m[i] = make([]bool, n)
	}
	return m
}

// judge is the bug of a history that is not linearizable (nil if it is).
func judge(spec *linearize.Spec, h *linearize.History, trs []*record.Transition, last []int) *record.Bug {
	v, err := spec.Check(h)
	if err != nil {
		return &record.Bug{Kind: record.BugLinearizability, Message: "linearizability: " + err.Error(), Details: historyDetails(h, nil, nil)}
	}
	if v.OK {
		return nil
	}
	b := &record.Bug{Kind: record.BugLinearizability, Message: "not linearizable: " + v.Reason,
		Details: historyDetails(h, v.Offending, v.Expected)}
	if len(v.Offending) > 0 {
		c := v.Offending[0]
		tr := trs[last[c]]
		b.Thread, b.Stack = tr.Thread, tr.Stack
		if len(tr.Stack) > 0 {
			b.PC = tr.Stack[0]
		}
	}
	return b
}

// historyDetails is the history as a per-thread timeline: each thread's
// calls in order (threads by TID), the offending results marked with what the closest
// order of the calls gives.
func historyDetails(h *linearize.History, offending []int, expected []uint64) []record.Detail {
	exp := map[int]uint64{}
	for k, c := range offending {
		exp[c] = expected[k]
	}
	var threads []record.TID
	for i := range h.Calls {
		if t := h.Calls[i].Thread; !slices.Contains(threads, t) {
			threads = append(threads, t)
		}
	}
	slices.Sort(threads)
	var out []record.Detail
	for _, t := range threads {
		var parts []string
		for i := range h.Calls {
			if c := &h.Calls[i]; c.Thread == t {
				s := c.String()
				if e, ok := exp[i]; ok {
					s += fmt.Sprintf(" ✗ (the closest order of the calls gives %d)", int64(e))
				}
				parts = append(parts, s)
			}
		}
		out = append(out, record.Detail{Title: fmt.Sprintf("history: thread %d's calls", t), Thread: t, Text: strings.Join(parts, "  |  ")})
	}
	return out
}
