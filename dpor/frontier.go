package dpor

import (
	"errors"
	"fmt"
	"slices"

	"landslide/estimator"
	"landslide/record"
)

// FrontierVersion is the version of the Frontier layout.
const FrontierVersion = 1

// Frontier is the explorer's state between two interleavings, as plain
// data: enough for another process to continue the exploration exactly
// where this one stood (Resume), given the same program and options.
//
// It holds the current branch (its choices and transitions, from which
// the happens-before and conflict analysis is rebuilt without executing
// anything), each node's explored and tagged threads, the counters, and
// the estimator's path. Machine states are not part of it: a node's
// snapshot is rebuilt, when backtracking first needs it, by re-executing
// the branch's choices from the nearest earlier state available (the
// program's start, or a stored checkpoint: Options.Checkpoint).
type Frontier struct {
	Version     int
	Nodes       []FrontierNode
	Choices     []record.Choice
	Transitions []*record.Transition
	// Counters (see Explorer). Round is the strategy's round (0 in
	// frontiers stored before rounds were counted: an ICB round's number
	// is its bound).
	Round, Bound, Branches, Executed, Steps, DepthSum, LastDiv, Budgeted, Failing int
	Dropped                                                                       bool
	// Restricted: the strategy left a switch point out this round.
	Restricted bool `msgpack:",omitempty"`
	Estimator  estimator.State
	// Optimal is the optimal strategy's state, one entry per node (its
	// sleep sets and wakeup trees are not a function of the path).
	Optimal []OptimalNode `msgpack:",omitempty"`
	// OptimalConservative: optimal DPOR saw a branch cut a thread off
	// (optimalStrategy.conservative).
	OptimalConservative bool `msgpack:",omitempty"`
	// CBDPOR is CB-DPOR's state, one entry per node (its sleep sets and
	// the transitions its preempted threads sleep with).
	CBDPOR []CBNode `msgpack:",omitempty"`
	// DPOR is the dpor strategy's sleep sets, one entry per node (absent
	// from frontiers stored before it kept them, and without sleep sets).
	DPOR []DPORNode `msgpack:",omitempty"`
	// Reversal is the reversal strategy's base and candidates.
	Reversal *ReversalState `msgpack:",omitempty"`
	// FellBack: optimal DPOR (Spec.Fallback) left for the dpor strategy,
	// and why (Result.Fallback); the strategy state is then the dpor
	// strategy's.
	FellBack string `msgpack:",omitempty"`
	// FallbackDue: the last branch showed optimal DPOR not exact here
	// (why); the exploration falls back before its next branch.
	FallbackDue string `msgpack:",omitempty"`
	// SleepBlocked counts the executions abandoned with every runnable
	// thread asleep (in Executed, not in Branches).
	SleepBlocked int `msgpack:",omitempty"`
	// SelfAborts counts the executions stopped at a transaction that
	// aborted itself (in Executed, not in Branches).
	SelfAborts int `msgpack:",omitempty"`
	// Blocked counts the infeasible executions (in Executed, not in
	// Branches).
	Blocked int `msgpack:",omitempty"`
}

// FrontierNode is one PP of the current branch.
type FrontierNode struct {
	Runnable  []record.TID
	Prev      record.TID
	Voluntary bool
	Pre       int
	Chosen    record.TID
	Explored  []record.TID
	Tagged    []record.TID
	// Transactional memory: injected choices to explore and all ever
	// injected (absent from older frontiers). Which threads are at an
	// _xbegin follows from the transitions.
	Inject   []record.Choice `msgpack:",omitempty"`
	Injected []record.Choice `msgpack:",omitempty"`
	// Values: per runnable thread, how many variants its transition from
	// here has (the values of the nondet call it ends at; 0 for none or
	// not known); absent where none is known.
	Values []int64 `msgpack:",omitempty"`
	// Retry sets: the constraints in force, and the sets of the pending
	// tags and of all tags and explorations (retry.go). As sorted lists,
	// so that a frontier encodes to the same bytes. RetryTags is an older
	// frontier's: read, never written.
	Cons      []RetryResult   `msgpack:",omitempty"`
	RetryTags []FrontierRetry `msgpack:",omitempty"`
	RetryTodo []RetrySet      `msgpack:",omitempty"`
	RetryEver []RetrySet      `msgpack:",omitempty"`
	// Narrow and NarrowInjected: the explored threads and the injected
	// choices that ran here only under a retry set narrower than the
	// node's constraints.
	Narrow         []record.TID    `msgpack:",omitempty"`
	NarrowInjected []record.Choice `msgpack:",omitempty"`
}

// Frontier returns the explorer's state. Call it from OnBranch (between
// interleavings); the result shares nothing with the explorer. After a
// Run whose Result is Cut it is nil.
func (x *Explorer) Frontier() *Frontier {
	if x.cut {
		return nil // inside a branch (Result.Cut): no state to resume from
	}
	f := &Frontier{
		Version:     FrontierVersion,
		Nodes:       make([]FrontierNode, len(x.nodes)),
		Choices:     slices.Clone(x.choices),
		Transitions: slices.Clone(x.trs),
		Round:       x.round,
		Bound:       x.bound,
		Branches:    x.branches,
		Executed:    x.executed,
		Steps:       x.nTrans,
		DepthSum:    x.depthSum,
		LastDiv:     x.lastDiv,
		Budgeted:    x.budgeted,
		Failing:     x.an.failing,
		Dropped:     x.dropped,
		Restricted:  x.restricted,
		Estimator:   x.est.State(),

		FellBack:     x.fellBack,
		FallbackDue:  x.fallbackWhy,
		SleepBlocked: x.sleepBlocked,
		SelfAborts:   x.selfAborts,
		Blocked:      x.blocked,
	}
	if st, ok := x.strat.(statefulStrategy); ok {
		st.save(f)
	}
	for i := range x.nodes {
		n := &x.nodes[i]
		f.Nodes[i] = FrontierNode{Runnable: slices.Clone(n.runnable), Prev: n.prev, Voluntary: n.voluntary,
			Pre: n.pre, Chosen: n.chosen, Explored: slices.Clone(n.explored), Tagged: slices.Clone(n.tagged),
			Inject: slices.Clone(n.inject), Injected: slices.Clone(n.injected), Values: slices.Clone(n.vals),
			Cons: consList(n.consIn), RetryTodo: setList(n.rtodo), RetryEver: setList(n.rever), Narrow: slices.Clone(n.narrow), NarrowInjected: slices.Clone(n.narrowInj)}
	}
	return f
}

// statefulStrategy is a strategy whose state is not a function of the
// path: it keeps it in the Frontier.
type statefulStrategy interface {
	save(f *Frontier)
	load(f *Frontier) error // f is validated; an error wraps ErrFrontier
}

// ErrFrontier reports a frontier that does not fit the program or is
// malformed.
var ErrFrontier = errors.New("invalid DPOR frontier")

// validate checks the frontier's shape (it may come from a damaged store).
func (f *Frontier) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrFrontier, fmt.Sprintf(format, args...))
	}
	if f.Version != FrontierVersion {
		return bad("version %d, this landslide reads %d", f.Version, FrontierVersion)
	}
	nt, nn := len(f.Transitions), len(f.Nodes)
	if nn == 0 || len(f.Choices) != nt || (nn != nt && nn != nt+1) {
		return bad("%d nodes, %d choices, %d transitions", nn, len(f.Choices), nt)
	}
	for i, t := range f.Transitions {
		if t == nil || t.Thread != f.Choices[i].Thread {
			return bad("transition %d does not match its choice", i)
		}
		if !slices.Contains(f.Nodes[i].Runnable, t.Thread) {
			return bad("transition %d: thread %d was not runnable", i, t.Thread)
		}
	}
	var xb []record.TID // threads at an _xbegin at node i
	for i, n := range f.Nodes {
		if i > 0 {
			xb = xbeginAfter(xb, f.Transitions[i-1])
		}
		if n.Values != nil && len(n.Values) != len(n.Runnable) || slices.ContainsFunc(n.Values, func(v int64) bool { return v < 0 }) {
			return bad("node %d: %d value counts for %d runnable threads", i, len(n.Values), len(n.Runnable))
		}
		vals := func(q record.TID) int64 {
			if k := slices.Index(n.Runnable, q); k >= 0 && n.Values != nil {
				return n.Values[k]
			}
			return 0
		}
		if !slices.IsSorted(n.Runnable) {
			return bad("node %d: runnable threads out of order", i)
		}
		for _, q := range n.Narrow {
			if !slices.Contains(n.Explored, q) {
				return bad("node %d: thread %d ran under a narrower retry set but not explored", i, q)
			}
		}
		for _, c := range n.NarrowInjected {
			if !slices.Contains(n.Injected, c) {
				return bad("node %d: choice %d:%d ran under a narrower retry set but not injected", i, c.Thread, c.Value)
			}
		}
		for _, q := range append(slices.Clone(n.Explored), n.Tagged...) {
			if !slices.Contains(n.Runnable, q) {
				return bad("node %d: thread %d explored or tagged but not runnable", i, q)
			}
		}
		for _, t := range n.RetryTags {
			if !slices.Contains(n.Runnable, t.Thread) {
				return bad("node %d: retry tag of thread %d, not runnable", i, t.Thread)
			}
		}
		for _, s := range append(slices.Clone(n.RetryTodo), n.RetryEver...) {
			if !slices.Contains(n.Runnable, s.Thread) {
				return bad("node %d: retry set of thread %d, not runnable", i, s.Thread)
			}
		}
		for _, c := range append(slices.Clone(n.Injected), n.Inject...) {
			if !slices.Contains(xb, c.Thread) && c.Value >= vals(c.Thread) || !slices.Contains(n.Runnable, c.Thread) || c.Value <= 0 {
				return bad("node %d: injected choice %d:%d of a thread not at an _xbegin or a nondet call", i, c.Thread, c.Value)
			}
		}
		if n.Pre < 0 || (i > 0 && n.Pre < f.Nodes[i-1].Pre) {
			return bad("node %d: preemption count %d", i, n.Pre)
		}
	}
	if len(f.Estimator.Nodes) != nt+1 {
		return bad("%d estimator nodes for %d transitions", len(f.Estimator.Nodes), nt)
	}
	if f.Failing < 0 || f.Failing >= max(nt, 1) || f.LastDiv < 0 || f.LastDiv > nt ||
		f.Branches < 0 || f.SleepBlocked < 0 || f.SelfAborts < 0 || f.Blocked < 0 ||
		f.Executed < f.Branches || f.Executed-f.Branches < f.SleepBlocked || f.Executed-f.Branches-f.SleepBlocked < f.SelfAborts ||
		f.Executed-f.Branches-f.SleepBlocked-f.SelfAborts < f.Blocked || f.Budgeted < 0 || f.Bound < 0 || f.Round < 0 {
		return bad("counters out of range")
	}
	return nil
}

// Resume returns an explorer that continues from f. m must be at the
// program's start, built from the same program with the same options as
// the explorer f came from; opt should be those options too (its limits
// may differ: MaxInterleavings counts all interleavings, f's included).
// Run then goes on with the interleaving after the last one f counted.
// Nothing is executed until a snapshot is needed; re-execution checks
// every transition against f's, so a different program is an error, not
// a wrong result.
func Resume(m record.Machine, opt Options, f *Frontier) (*Explorer, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	if done, _ := m.Ended(); done {
		return nil, errors.New("the machine has already ended")
	}
	if got := m.Runnable(); !slices.Equal(got, f.Nodes[0].Runnable) {
		return nil, fmt.Errorf("%w: at the program's start threads %v can run, the frontier says %v (another program?)", ErrFrontier, got, f.Nodes[0].Runnable)
	}
	x, err := New(m, opt)
	if err != nil {
		return nil, err
	}
	x.resumed = true
	x.round = f.Round
	if x.round == 0 && f.Bound < UnlimitedBound {
		x.round = f.Bound
	}
	x.bound, x.branches, x.executed, x.nTrans = f.Bound, f.Branches, f.Executed, f.Steps
	x.depthSum, x.lastDiv, x.budgeted, x.dropped = f.DepthSum, f.LastDiv, f.Budgeted, f.Dropped
	x.restricted = f.Restricted
	x.sleepBlocked, x.selfAborts, x.blocked = f.SleepBlocked, f.SelfAborts, f.Blocked
	x.classesPartial = true // the interleavings run before are not counted again
	x.est.SetState(f.Estimator)
	x.nodes = make([]node, len(f.Nodes))
	for i, n := range f.Nodes {
		x.nodes[i] = node{runnable: slices.Clone(n.Runnable), prev: n.Prev, voluntary: n.Voluntary, pre: n.Pre,
			chosen: n.Chosen, explored: slices.Clone(n.Explored), tagged: slices.Clone(n.Tagged),
			inject: slices.Clone(n.Inject), injected: slices.Clone(n.Injected), vals: slices.Clone(n.Values),
			consIn: consMap(n.Cons), rtodo: setMap(n.RetryTodo), rever: setMap(n.RetryEver), narrow: slices.Clone(n.Narrow), narrowInj: slices.Clone(n.NarrowInjected)}
		oldTags(&x.nodes[i], n.RetryTags)
		if i > 0 {
			x.nodes[i].xb = xbeginAfter(x.nodes[i-1].xb, f.Transitions[i-1])
		}
	}
	x.nodes[0].snap = m.Snapshot()
	x.trs = slices.Clone(f.Transitions)
	x.choices = slices.Clone(f.Choices)
	x.preempted = make([]bool, len(x.trs))
	for i, tr := range x.trs {
		x.preempted[i] = x.nodes[i].cost(tr.Thread) > 0
		x.an.add(tr, x.nodes[i].runnable)
		if i+1 < len(x.nodes) {
			x.an.after(x.nodes[i+1].runnable)
		}
	}
	x.an.failing = f.Failing
	if (f.FellBack != "" || f.FallbackDue != "") && !opt.Fallback {
		return nil, fmt.Errorf("%w: it falls back to the dpor strategy, which the spec does not ask for", ErrFrontier)
	}
	if f.FellBack != "" && f.FallbackDue != "" {
		return nil, fmt.Errorf("%w: it fell back to the dpor strategy twice", ErrFrontier)
	}
	x.fallbackWhy = f.FallbackDue
	if f.FellBack != "" {
		if err := x.useDpor(); err != nil {
			return nil, err
		}
		x.fellBack = f.FellBack
	}
	if st, ok := x.strat.(statefulStrategy); ok {
		if err := st.load(f); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// snapAt returns node i's snapshot, rebuilding it if needed (after
// Resume) by re-executing the branch's choices from the nearest earlier
// node that has one, or from a checkpoint (Options.Checkpoint). It leaves
// the machine in node i's state.
func (x *Explorer) snapAt(i int) (record.Snapshot, error) {
	if s := x.nodes[i].snap; s != nil {
		return s, nil
	}
	k := i
	for x.nodes[k].snap == nil {
		k--
	}
	start := x.nodes[k].snap
	if x.opt.Checkpoint != nil {
		if d, s := x.opt.Checkpoint(x.choices[:i]); s != nil && d > k && d <= i {
			k, start = d, s
			x.nodes[k].snap = s
		}
	}
	x.m.Restore(start)
	for j := k; j < i; j++ {
		tr, err := x.m.Step(x.choices[j])
		if err != nil && !errors.Is(err, record.ErrBudget) {
			return nil, fmt.Errorf("dpor: re-executing transition %d: %w", j, err)
		}
		if record.Hash([]*record.Transition{tr}) != record.Hash(x.trs[j:j+1]) {
			return nil, fmt.Errorf("%w: re-executing transition %d (thread %d) gave a different transition: the program or options differ from the stored exploration's", ErrFrontier, j, x.choices[j].Thread)
		}
		if got := x.m.Runnable(); !slices.Equal(got, x.nodes[j+1].runnable) {
			return nil, fmt.Errorf("%w: after transition %d threads %v can run, the frontier says %v", ErrFrontier, j, got, x.nodes[j+1].runnable)
		}
		x.nodes[j+1].snap = x.m.Snapshot()
	}
	return x.nodes[i].snap, nil
}
