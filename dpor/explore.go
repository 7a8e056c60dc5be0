package dpor

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"landslide/estimator"
	"landslide/record"
)

// maxProbe bounds a probe's transitions (see probe).
const maxProbe = 1000

// Thesis constants for the depth heuristic (§3.4.6 (a), check_infinite_loop).
const (
	ProgressDepthFactor       = 20            // depth > factor × average depth of completed branches
	ProgressConfidentBranches = 10            // before this many branches the factor is scaled up
	ProgressBranchUncertainty = 1.1           // by this, per missing branch
	UnlimitedBound            = math.MaxInt32 // Options.MaxBound: no cap
)

// Branch is one completed interleaving. Its slices belong to the explorer
// and are valid only during the OnBranch call.
type Branch struct {
	N           int // 1-based, over the whole exploration
	Round       int // the round (see Strategy.Bound), 0 for the first
	Transitions []*record.Transition
	Choices     []record.Choice
	Preempted   []bool // per transition: it began with a preemption
	Preemptions int
	// Divergence is the index of the first transition not shared with the
	// previous branch; NewPairs are the conflicting, happens-before
	// unordered transition pairs (i<j) with j >= Divergence.
	Divergence int
	NewPairs   [][2]int
	Bug        *record.Bug
	// Limit: the execution ended at a limit of the machine
	// (record.Bug.IsLimit), not with a bug; it is not the program's end
	// either, and the exploration stops after it (StopCheckerLimit).
	Limit  *record.Bug
	Budget bool // the execution ran out of instructions
	// SleepBlocked: the branch stopped at a node where every runnable
	// thread was asleep (Strategy.Pick returned abandon): it is not an
	// interleaving, and its end state is not the program's.
	SleepBlocked bool
	// Blocked: the execution was infeasible (record.Blocker: a thread
	// stopped by __VERIFIER_assume(0)); not an interleaving either.
	Blocked bool
	// SelfAbort: the branch stopped after its last transition, a
	// transaction that aborted itself, whose abort the node's injected
	// abort explores (stopAtSelfAbort): it is not an interleaving either.
	SelfAbort bool
	Estimate  estimator.Estimate

	x *Explorer // for HappensAfter, during Options.Judge and OnBranch
}

// HappensAfter reports whether transition k of the branch happens after
// transition i (i < k) over every dependency: program order, the
// scheduling order, memory conflicts. Valid only during Options.Judge and
// OnBranch.
func (b *Branch) HappensAfter(i, k int) bool {
	return b.x != nil && i < k && k < len(b.x.trs) && b.x.an.happensAfter(i, k)
}

// Class identifies the branch's Mazurkiewicz trace: equivalent
// interleavings (the same transitions, each ordered after the same
// others over every dependency) have the same Class, others differ (up
// to hash collisions). It hashes, per thread in TID order, each
// transition's content (its choice value and what it touched) and the
// transitions of other threads it happens after (the last of each thread,
// by its number among that thread's). Not the PP a transition ends at:
// the one that ends the program ends at none (record.PPEnd), whichever it
// is; otherwise equal inputs (the same writes read, as happens-before is
// the same) make the same transition. Valid only during
// Options.Judge and OnBranch; a sleep-set blocked branch has one too (of
// its prefix).
func (b *Branch) Class() [16]byte { return b.x.class() }

// class is Branch.Class of the current branch. It walks each thread's
// transitions through the analysis's chains (prev, last) instead of
// sorting the branch, and works in reused buffers.
func (x *Explorer) class() [16]byte {
	a := &x.an
	n := len(x.trs)
	ord := slices.Grow(x.classOrd[:0], n)[:n] // each transition's number among its thread's
	for j := range n {
		if p := a.prev[j]; p >= 0 {
			ord[j] = ord[p] + 1
		} else {
			ord[j] = 0
		}
	}
	// The thread slots in TID order.
	slotOrd := x.classSlots[:0]
	for s := range a.slots {
		slotOrd = append(slotOrd, int32(s))
	}
	slices.SortFunc(slotOrd, func(p, q int32) int { return cmp.Compare(a.slots[p], a.slots[q]) })
	// One SHA-256 over a reused buffer (the CPU's SHA instructions), not
	// FNV-128 fed 8 bytes at a time: a tenth of the cost on every branch.
	buf := x.classBuf[:0]
	put := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	seq := x.classSeq[:0]
	for _, s := range slotOrd {
		seq = seq[:0]
		for j := a.last[s]; j >= 0; j = a.prev[j] {
			seq = append(seq, j)
		}
		for q := len(seq) - 1; q >= 0; q-- {
			j := seq[q]
			tr := x.trs[j]
			put(uint64(tr.Thread))
			put(uint64(ord[j]))
			put(uint64(x.choiceValue(int(j))))
			for _, k := range a.keys[j] {
				put(k.key)
				put(uint64(k.r) | uint64(k.w)<<8)
			}
			// The last transition of each other thread it happens after,
			// in TID order.
			full := a.full[j]
			cnt := len(buf)
			put(0)
			deps := 0
			for _, t := range slotOrd {
				if int(t) < len(full) {
					if v := full[t]; v >= 0 && a.slots[t] != tr.Thread {
						put(uint64(a.slots[t]))
						put(uint64(ord[v]))
						deps++
					}
				}
			}
			binary.LittleEndian.PutUint64(buf[cnt:], uint64(deps))
		}
	}
	x.classBuf, x.classOrd, x.classSlots, x.classSeq = buf, ord, slotOrd, seq
	sum := sha256.Sum256(buf)
	return [16]byte(sum[:16])
}

// abandon is what Strategy.Pick returns to end the branch at the node
// (every runnable thread there is asleep).
const abandon record.TID = -1

// Result is what an exploration established.
type Result struct {
	Interleavings int // distinct interleavings (the last ICB round's)
	Executed      int // all interleavings run, ICB rounds included
	Transitions   int // transitions executed
	Complete      bool
	// Bounded: ICB stopped at MaxBound with tags the bound dropped, so the
	// state space is verified only up to Bound preemptions. A restricted
	// strategy (StrategyInfo.Restricted) that left switch points out is
	// Bounded too, with Restricted set and Stopped StopRestricted.
	Bounded    bool
	Restricted bool
	Bound      int
	Bug        *record.Bug
	// BugBranch is a copy of the failing branch (nil without a bug).
	BugBranch *Branch
	Budgeted  int // branches that ran out of instructions
	// SleepBlocked counts the executions that ended with every runnable
	// thread asleep (optimal DPOR: none); they are in Executed, not in
	// Interleavings.
	SleepBlocked int
	// Blocked counts the infeasible executions (Branch.Blocked), in
	// Executed, not in Interleavings or Traces: Nidhugg's and GenMC's
	// assume-blocked executions.
	Blocked int
	// SelfAborts counts the executions stopped at a transaction that
	// aborted itself (Branch.SelfAbort); in Executed, not in
	// Interleavings.
	SelfAborts int
	// Traces counts the distinct Mazurkiewicz traces (Branch.Class) among
	// the interleavings that ended (not sleep-set blocked, not out of
	// instructions), ICB rounds included. TracesAtLeast: it is a lower
	// bound, as a resumed exploration counts only its own interleavings
	// and the count stops growing at MaxCountedTraces.
	Traces        int
	TracesAtLeast bool
	Estimate      estimator.Estimate
	Stopped       Stop // why an incomplete exploration stopped
	// Limit is the machine's report of the execution that went past a
	// checker limit (Stopped is StopCheckerLimit): which limit, the
	// thread and its stack; LimitChoices are that execution's choices
	// (they replay it).
	Limit        *record.Bug
	LimitChoices []record.Choice
	// Caveat, if set, says why the strategy's claim (each trace of the
	// state space explored) may not hold for this program.
	Caveat string
	// Fallback, if set, says why optimal DPOR (Spec.Fallback) explored
	// again from the root with the dpor strategy: the counts include
	// the executions run before (Executed, Traces; Interleavings are the
	// dpor strategy's), and the verdict rests on the dpor strategy's
	// complete exploration.
	Fallback string
	// Depth is the number of transitions of the last interleaving.
	Depth int
	// Cut: Options.Expired ended the exploration inside an execution
	// (Stopped is StopBudget, or StopCanceled when the context was
	// canceled by then): that execution is not counted, the counts are
	// those of the executions before it, and the Explorer, left inside
	// it, has no Frontier.
	Cut bool
}

// node is one PP of the current branch.
type node struct {
	snap      record.Snapshot
	runnable  []record.TID
	prev      record.TID // thread of the transition into this node (0 at the root)
	voluntary bool       // that transition ended by a voluntary switch
	pre       int        // preemptions before this node
	chosen    record.TID
	explored  []record.TID
	tagged    []record.TID
	// Transactional memory (htm.go): the threads stopped at an _xbegin
	// here, the injected choices to explore, and all ever injected (the
	// values of nondet calls too: nondet.go; vals holds, per runnable
	// thread, how many values its transition from here ends with, nil
	// if none is known to).
	xb       []record.TID
	inject   []record.Choice
	injected []record.Choice
	vals     []int64
	// Retry sets (retry.go): the constraints in force here; per thread,
	// the sets of its pending tags (in the order of its entries in
	// tagged) and those of all its tags and explorations here.
	// narrowed: the current child runs under a tag's set that
	// constrains more than consIn (its subtree is not all of the
	// thread's there: it puts the thread to sleep nowhere).
	// narrow and narrowInj: the explored threads and the injected
	// choices that ran here only under narrower sets.
	consIn    retryCons
	rtodo     map[record.TID][]retryCons
	rever     map[record.TID][]retryCons
	narrowed  bool
	narrow    []record.TID
	narrowInj []record.Choice
}

// Explorer explores one machine: it is the exploration path (the current
// branch as nodes, backtracking, snapshots, the analysis, the frontier),
// steered by a Strategy.
type Explorer struct {
	m     record.Machine
	opt   Options
	strat Strategy

	nodes     []node
	trs       []*record.Transition
	choices   []record.Choice
	preempted []bool
	an        analysis
	est       estimator.Path

	round   int
	bound   int
	dropped bool // a tag was dropped by the bound this round
	// restricted: the strategy left a switch point out this round
	// (StrategyInfo.Restricted).
	restricted bool
	branches   int // completed branches this round
	executed   int
	nTrans     int
	depthSum   int
	lastDiv    int
	budgeted   int // branches that ran out of instructions
	// sleepBlocked counts the branches abandoned with every runnable
	// thread asleep; selfAborts those stopped at a self-abort; blocked
	// the infeasible ones (Branch.Blocked).
	sleepBlocked, selfAborts, blocked int
	resumed                           bool // Resume built the branch: Run starts by choosing the next one
	// cut: Run returned from inside a branch (Result.Cut).
	cut bool
	// classes holds the Mazurkiewicz traces of the interleavings run
	// (Result.Traces); classesPartial: not all of them (resumed, or
	// capped at MaxCountedTraces).
	classes        map[[16]byte]struct{}
	classBuf       []byte // class's buffers
	classOrd       []int32
	classSlots     []int32
	classSeq       []int32
	classesPartial bool
	lastStamp      time.Duration
	start          time.Time
	// sampling: the strategy does not enumerate the tree (random walks),
	// so the estimator's size, proportion and ETA mean nothing.
	sampling bool
	caveat   string // Result.Caveat
	// fallbackWhy: the branch just run showed optimal DPOR not exact
	// here (Spec.Fallback): Run switches to the dpor strategy after it;
	// fellBack: it did, and why (Result.Fallback; in the frontier).
	fallbackWhy, fellBack string
	// stopsSelfAborts: the strategy stops a branch at a self-abort
	// (selfAbortStopper).
	stopsSelfAborts bool
	// Retry sets (retry.go): the race being tagged, the set of the tag
	// the branch starts with, the constraints for the node being pushed.
	race     race
	tagSet   retryCons
	consNext retryCons
}

// New prepares an exploration of m from its current state (which must be
// a PP: the program's start) with the strategy opt.Spec names.
func New(m record.Machine, opt Options) (*Explorer, error) {
	st, info, err := newStrategy(opt.Spec)
	if err != nil {
		return nil, err
	}
	x := &Explorer{m: m, opt: opt, strat: st, sampling: !info.Exhaustive}
	_, x.stopsSelfAborts = st.(selfAbortStopper)
	if x.opt.Now == nil {
		x.start = time.Now()
		x.opt.Now = func() time.Duration { return time.Since(x.start) }
	}
	return x, nil
}

func voluntary(k record.PPKind) bool {
	switch k {
	case record.PPYield, record.PPBlock, record.PPExit, record.PPSleep:
		return true
	}
	return false
}

func contains(ts []record.TID, t record.TID) bool {
	for _, u := range ts {
		if u == t {
			return true
		}
	}
	return false
}

// cost is the preemptions that choosing q at n adds.
func (n *node) cost(q record.TID) int {
	if n.prev != 0 && q != n.prev && !n.voluntary && contains(n.runnable, n.prev) {
		return 1
	}
	return 0
}

// marked counts the children explored or tagged, injected ones included.
func (n *node) marked() int { return len(n.explored) + len(n.tagged) + len(n.injected) }

// pushNode records the PP the machine is at.
func (x *Explorer) pushNode(prev record.TID, vol bool, pre int) {
	n := node{runnable: x.m.Runnable(), prev: prev, voluntary: vol, pre: pre, consIn: x.consNext}
	k := len(x.nodes)
	if k > 0 {
		n.xb = xbeginAfter(x.nodes[k-1].xb, x.trs[k-1])
	}
	// A snapshot is for coming back to run another child. A node where
	// one thread can run, with no _xbegin result or nondet value to
	// choose, never has another (a snapshot costs its copy and the
	// copy-on-write of every page the next transition writes): snapAt
	// rebuilds it from the node before in the rare case one is needed
	// (a probe, a stack capture, a checkpoint).
	if k == 0 || len(n.runnable) != 1 || len(n.xb) > 0 || x.hasValues(n.runnable[0]) {
		n.snap = x.m.Snapshot()
	}
	x.nodes = append(x.nodes, n)
	if k := len(x.nodes) - 1; k > 0 {
		x.an.after(n.runnable)
	}
	if x.opt.RetrySets && len(n.xb) > 0 {
		x.caveat = RetrySetsCaveat
	}
	if len(n.xb) > 0 {
		x.needFallback(fallbackTM)
	}
	x.strat.Reached(x, len(x.nodes)-1)
}

// hasValues reports whether thread t's next transition ends at a nondet
// call, whose values are children of the node too.
func (x *Explorer) hasValues(t record.TID) bool {
	v, ok := x.m.(record.Valuer)
	return ok && v.Values(t) > 0
}

// Run explores until the state space is complete, a bug is found (unless
// KeepGoing), a limit stops it, or ctx is canceled (checked after each
// interleaving: the explorer's state, Frontier, is then that of the last
// interleaving, and Result.Stopped is StopCanceled).
func (x *Explorer) Run(ctx context.Context) (*Result, error) {
	if x.cut {
		return nil, errors.New("dpor: the exploration was cut inside an execution (Result.Cut): it cannot go on")
	}
	res := &Result{}
	var pending record.Choice // the tag to run at the deepest node
	if x.resumed {
		res.Executed, res.Transitions, res.Interleavings = x.executed, x.nTrans, x.branches
		res.Estimate, res.Bound, res.Budgeted = x.Estimate(), x.bound, x.budgeted
		res.Depth, res.SleepBlocked, res.SelfAborts, res.Blocked = len(x.trs), x.sleepBlocked, x.selfAborts, x.blocked
		res.Traces, res.TracesAtLeast = len(x.classes), x.classesPartial
		res.Caveat, res.Fallback = x.caveatNow(), x.fellBack
	} else {
		if done, _ := x.m.Ended(); done {
			return nil, errors.New("the machine has already ended")
		}
		bound, ok := x.strat.Bound(0)
		if !ok {
			return nil, errors.New("dpor: the strategy has no first round")
		}
		x.round, x.bound = 0, bound
		x.est.Push(0)
		x.pushNode(0, false, 0)
	}
	x.lastStamp = x.opt.Now()
	for {
		if x.resumed {
			x.resumed = false // the frontier's branch was counted by the run that stored it
		} else {
			br, err := x.runBranch(pending)
			if errors.Is(err, errCut) {
				// res holds the counts of the branches before this one.
				x.cut = true
				res.Stopped, res.Cut = StopBudget, true
				if ctx.Err() != nil {
					res.Stopped = StopCanceled
				}
				return res, nil
			}
			if err != nil {
				return nil, err
			}
			if br.Budget {
				x.budgeted++
			}
			res.Executed = x.executed
			res.Transitions = x.nTrans
			res.Interleavings = x.branches
			res.Estimate = br.Estimate
			res.Bound = x.bound
			res.Budgeted = x.budgeted
			res.SleepBlocked = x.sleepBlocked
			res.Blocked = x.blocked
			res.SelfAborts = x.selfAborts
			res.Depth = len(br.Transitions)
			res.Traces, res.TracesAtLeast = len(x.classes), x.classesPartial
			res.Caveat, res.Fallback = x.caveatNow(), x.fellBack
			stop := Continue
			if x.opt.OnBranch != nil {
				stop = x.opt.OnBranch(br)
			}
			if br.Limit != nil && x.opt.PastLimits {
				x.budgeted++
				res.Budgeted = x.budgeted
				if res.Limit == nil {
					res.Limit, res.LimitChoices = br.Limit, append([]record.Choice(nil), br.Choices...)
				}
			} else if br.Limit != nil {
				// No interleaving through that execution can be run: the
				// state space cannot complete.
				res.Limit, res.LimitChoices = br.Limit, append([]record.Choice(nil), br.Choices...)
				res.Stopped = StopCheckerLimit
				return res, nil
			}
			bug := br.Bug
			if bug != nil && x.opt.Wanted != nil && !x.opt.Wanted(bug) {
				bug = nil
			}
			if bug != nil && res.Bug == nil {
				res.Bug = bug
				res.BugBranch = copyBranch(br)
			}
			if bug != nil && !x.opt.KeepGoing {
				res.Stopped = StopBug
				return res, nil
			}
			if stop != Continue {
				res.Stopped = stop
				return res, nil
			}
		}
		if x.fallbackWhy != "" {
			// The limits first, so that a stop leaves the frontier of the
			// last interleaving, with the fallback due (Resume does it).
			if stop := x.limitReached(ctx); stop != Continue {
				res.Stopped = stop
				return res, nil
			}
			if err := x.fallBack(); err != nil {
				return nil, err
			}
			res.Caveat, res.Fallback = x.caveatNow(), x.fellBack
			pending = record.Choice{}
			continue
		}
		if r, ok := x.strat.(restarter); ok && r.restartNow() {
			// Explore again from the root (restarter): the executions
			// run so far stay counted in Executed, and their traces in
			// Traces.
			if err := x.restart(x.round, x.bound); err != nil {
				return nil, err
			}
			pending = record.Choice{}
			continue
		}
		// The limits are checked before a tag is taken, so that the
		// explorer's state (Frontier) stays that of the last interleaving.
		if !x.hasNext() {
			if x.dropped {
				if bound, ok := x.strat.Bound(x.round + 1); ok {
					if err := x.restart(x.round+1, bound); err != nil {
						return nil, err
					}
					pending = record.Choice{}
					continue
				}
			}
			res.Complete = !x.dropped && !x.restricted
			res.Bounded = !res.Complete
			switch {
			case x.dropped:
				res.Stopped = StopBound
			case x.restricted:
				res.Stopped, res.Restricted = StopRestricted, true
			}
			return res, nil
		}
		if stop := x.limitReached(ctx); stop != Continue {
			res.Stopped = stop
			return res, nil
		}
		d, q := x.next()
		if err := x.backtrack(d); err != nil {
			return nil, err
		}
		pending = q
	}
}

// limitReached is why the exploration stops before its next branch: the
// interleaving limit (StopLimit) or ctx (StopCanceled); Continue if
// neither.
func (x *Explorer) limitReached(ctx context.Context) Stop {
	switch {
	case x.opt.MaxInterleavings > 0 && x.executed >= x.opt.MaxInterleavings:
		return StopLimit
	case canceled(ctx):
		return StopCanceled
	}
	return Continue
}

// restart begins round r, with the given bound, from the root.
func (x *Explorer) restart(r, bound int) error {
	if err := x.backtrack(0); err != nil {
		return err
	}
	root := &x.nodes[0]
	root.explored, root.tagged, root.chosen = nil, nil, 0
	root.inject, root.injected = nil, nil
	root.rtodo, root.rever, root.narrow, root.narrowInj = nil, nil, nil, nil
	x.est.Restart() // a new tree; the sibling model keeps what it learned
	x.est.Push(0)
	x.round, x.bound = r, bound
	x.dropped, x.restricted = false, false
	x.branches = 0
	x.lastDiv = 0
	x.strat.Reached(x, 0)
	return nil
}

// Why optimal DPOR with Spec.Fallback leaves for the dpor strategy
// (Result.Fallback).
const (
	fallbackTM      = "a thread reached an _xbegin: optimal DPOR is not exact on programs with transactions"
	fallbackBlocked = "an execution ended with every runnable thread asleep, which optimal DPOR's wakeup trees exclude where it is exact"
)

// needFallback notes that the branch being run shows optimal DPOR not
// exact on the program (why), when the Spec asks to fall back and it has
// not yet.
func (x *Explorer) needFallback(why string) {
	if x.opt.Fallback && x.fellBack == "" && x.fallbackWhy == "" {
		x.fallbackWhy = why
	}
}

// fallBack replaces optimal DPOR by the dpor strategy (Spec.Fallback)
// and begins the exploration again from the root. The executions run so
// far stay counted (Executed, and their traces in Traces), and so does
// the bug of one, if any was found. Optimal DPOR's caveats go: the
// verdict is the dpor strategy's.
func (x *Explorer) fallBack() error {
	if err := x.useDpor(); err != nil {
		return err
	}
	x.fellBack, x.fallbackWhy = x.fallbackWhy, ""
	x.caveat = ""
	return x.restart(x.round, x.bound)
}

// useDpor makes the dpor strategy, with the Spec's other settings, the
// exploration's (fallBack, and Resume of a frontier stored after it).
func (x *Explorer) useDpor() error {
	spec := x.opt.Spec
	spec.Strategy, spec.Fallback = "dpor", false
	st, err := NewStrategy(spec)
	if err != nil {
		return err
	}
	x.strat = st
	_, x.stopsSelfAborts = st.(selfAbortStopper)
	return nil
}

// hasNext reports whether some node has a tagged or injected, unexplored
// child.
func (x *Explorer) hasNext() bool {
	for i := range x.nodes {
		if len(x.nodes[i].tagged) > 0 || len(x.nodes[i].inject) > 0 {
			return true
		}
	}
	return false
}

// orderer is an optional interface of a Strategy that says which of
// node i's tagged threads or injected choices to explore first (first
// reports false to leave the explorer's order: injected choices, then
// tags as they came).
type orderer interface {
	first(x Path, i int) (record.Choice, bool)
}

// next takes the strategy's first choice (orderer), or else the first
// injected choice, or else the first tag, of the deepest node that has
// one (hasNext must hold).
func (x *Explorer) next() (int, record.Choice) {
	for d := len(x.nodes) - 1; d >= 0; d-- {
		n := &x.nodes[d]
		if o, ok := x.strat.(orderer); ok && len(n.tagged)+len(n.inject) > 0 {
			if ch, ok := o.first(x, d); ok {
				if k := slices.Index(n.tagged, ch.Thread); ch.Value == 0 && k >= 0 {
					x.popTag(n, k)
					return d, ch
				}
				if k := slices.Index(n.inject, ch); ch.Value != 0 && k >= 0 {
					n.inject = slices.Delete(slices.Clone(n.inject), k, k+1)
					return d, ch
				}
			}
		}
		if len(n.inject) > 0 {
			ch := n.inject[0]
			n.inject = n.inject[1:]
			return d, ch
		}
		if len(n.tagged) > 0 {
			return d, record.Choice{Thread: x.popTag(n, 0)}
		}
	}
	panic("dpor: next without a tag")
}

// backtrack cuts the branch to node d and restores its snapshot.
func (x *Explorer) backtrack(d int) error {
	t0 := x.opt.Now()
	snap, err := x.snapAt(d)
	if err != nil {
		return err
	}
	x.est.Backtrack(d)
	x.m.Restore(snap)
	// Now that the machine is at node d, nothing will use the deeper
	// nodes' states again: the machine may reuse what only they reached.
	rel, _ := x.m.(record.Releaser)
	for i := d + 1; i < len(x.nodes); i++ {
		if s := x.nodes[i].snap; s != nil && rel != nil {
			rel.Release(s)
		}
		x.nodes[i] = node{} // drop the snapshots
	}
	x.nodes = x.nodes[:d+1]
	x.trs = x.trs[:d]
	x.choices = x.choices[:d]
	x.preempted = x.preempted[:d]
	x.an.truncate(d)
	x.lastDiv = d
	x.lastStamp = x.opt.Now()
	x.est.AddTime(x.lastStamp - t0)
	return nil
}

// errCut is runBranch's answer when Options.Expired cuts a branch.
var errCut = errors.New("dpor: cut inside an execution")

// ExpiredEvery is how many steps of a branch run between two calls of
// Options.Expired. (A variable only so that tests of other packages can
// cut short executions: they lower it.)
var ExpiredEvery = 4096

// runBranch runs from the deepest node to the end, first choosing pending
// there if set, then the machine's default choices, and analyses the
// branch.
func (x *Explorer) runBranch(pending record.Choice) (*Branch, error) {
	br := &Branch{}
	for {
		k := len(x.nodes) - 1
		n := &x.nodes[k]
		ch, fromTag := x.choose(pending)
		pending = record.Choice{}
		if ch.Thread == abandon {
			// Every runnable thread is asleep: whatever runs next
			// repeats an explored subtree.
			br.SleepBlocked = true
			break
		}
		q := ch.Thread
		pre := n.pre + n.cost(q)
		n.chosen = q
		if x.opt.RetrySets {
			ch = x.retryConstrain(k, ch, fromTag)
		}
		x.markRan(k, ch, fromTag)
		fresh := true
		if vs, ok := x.strat.(valueSelector); ok {
			fresh = vs.allValues(x, k, ch)
		}
		x.preempted = append(x.preempted, n.cost(q) > 0)
		tr, err := x.m.Step(ch)
		if err != nil && !errors.Is(err, record.ErrBudget) {
			return nil, fmt.Errorf("dpor: step %d (thread %d): %w", len(x.trs), q, err)
		}
		now := x.opt.Now()
		x.est.Push(now - x.lastStamp)
		x.lastStamp = now
		x.nTrans++
		x.trs = append(x.trs, tr)
		x.choices = append(x.choices, ch)
		x.an.add(tr, n.runnable)
		if err != nil {
			br.Budget = true
			break
		}
		if ended, bug := x.m.Ended(); ended {
			if bug.IsLimit() {
				br.Limit = bug
			} else {
				br.Bug = bug
			}
			if b, ok := x.m.(record.Blocker); ok && bug == nil {
				br.Blocked = b.Blocked()
			}
			break
		}
		if x.stopAtSelfAbort(k, ch, tr) {
			br.SelfAbort = true
			break
		}
		x.noteValues(k, ch, tr, fresh)
		x.pushNode(q, voluntary(tr.PP.Kind), pre)
		if b := x.tooDeep(); b != nil {
			br.Bug = b
			break
		}
		if x.opt.Expired != nil && len(x.trs)%ExpiredEvery == 0 && x.opt.Expired() {
			return nil, errCut
		}
	}
	x.executed++
	switch {
	case br.SleepBlocked:
		x.sleepBlocked++
		x.needFallback(fallbackBlocked)
	case br.Blocked:
		x.blocked++
	case br.SelfAbort:
		x.selfAborts++
	default:
		x.branches++
	}
	x.depthSum += len(x.trs)
	// The new interleaving's conflicts: tag alternatives.
	br.Divergence = x.lastDiv
	br.NewPairs = x.an.pairsFrom(x.lastDiv)
	if err := x.strat.Branch(x, br); err != nil {
		return nil, err
	}
	br.x = x
	partial := br.SleepBlocked || br.SelfAbort || br.Budget || br.Limit != nil || br.Blocked // not the program's end state
	if br.Bug == nil && !partial && x.opt.Judge != nil {
		br.Transitions = x.trs
		br.Bug = x.opt.Judge(br)
	}
	if !partial {
		x.countClass()
	}
	for i := range x.nodes {
		x.est.SetMarked(i, x.nodes[i].marked())
	}
	br.N = x.executed
	br.Round = x.round
	br.Transitions = x.trs
	br.Choices = x.choices
	br.Preempted = x.preempted
	for _, p := range x.preempted {
		if p {
			br.Preemptions++
		}
	}
	br.Estimate = x.estimate(x.est.Leaf())
	return br, nil
}

// choose is the choice to run at the branch's last node: pending (a
// tag or an injected choice next took there), else the strategy's pick,
// else the machine's default (with retry sets, one no constraint
// blocks). fromTag: it is pending. Its thread is abandon when the
// strategy ends the branch there.
func (x *Explorer) choose(pending record.Choice) (ch record.Choice, fromTag bool) {
	if pending.Thread != 0 {
		return pending, true
	}
	ch = x.strat.Pick(x)
	if ch.Thread == 0 {
		ch.Thread = x.m.Default().Thread
		if x.opt.RetrySets {
			ch.Thread = x.unblocked(len(x.nodes)-1, ch.Thread)
		}
	}
	return ch, false
}

// markRan notes at node k that choice ch runs there: a thread's choice
// is explored and no longer tagged (with retry sets, its tags stay until
// their sets are covered: retry.go), and where it starts a transaction
// the abort is injected (injectRetry); a choice with a value (injected,
// or optimal DPOR's wakeup tree's) is tried, no longer to do, unless a
// narrower retry set forced it.
func (x *Explorer) markRan(k int, ch record.Choice, fromTag bool) {
	n := &x.nodes[k]
	q := ch.Thread
	if ch.Value != 0 {
		if !slices.Contains(n.injected, ch) {
			n.injected = append(n.injected, ch)
		}
		if !n.narrowed {
			n.narrowInj = slices.DeleteFunc(slices.Clone(n.narrowInj), func(c record.Choice) bool { return c == ch })
			if i := slices.Index(n.inject, ch); i >= 0 {
				n.inject = slices.Delete(slices.Clone(n.inject), i, i+1)
			}
		}
		return
	}
	x.noteNarrow(n, q)
	if !contains(n.explored, q) {
		n.explored = append(n.explored, q)
	}
	if !x.opt.RetrySets {
		n.tagged = remove(n.tagged, q)
	} else if !fromTag {
		x.noteDefault(k, q)
	}
	x.injectRetry(k, q) // where a transaction starts, it may abort
}

// blockedCaveater is an optional interface of a Strategy that claims no
// execution ends sleep-set blocked (optimal DPOR): blockedCaveat is the
// caveat of an exploration where n did.
type blockedCaveater interface{ blockedCaveat(n int) string }

// caveatNow is Result.Caveat: the path's (transactions under a strategy
// not exact there), and the strategy's where executions it excludes
// happened (blockedCaveater; counted in the frontier, so a resumed
// exploration says it too).
func (x *Explorer) caveatNow() string {
	c := x.caveat
	if b, ok := x.strat.(blockedCaveater); ok && x.sleepBlocked > 0 {
		if c != "" {
			c += "; "
		}
		c += b.blockedCaveat(x.sleepBlocked)
	}
	return c
}

// MaxCountedTraces caps the Mazurkiewicz traces an exploration holds to
// count them (Result.Traces): about 50 MB of hashes.
const MaxCountedTraces = 1 << 20

// countClass adds the current branch's Mazurkiewicz trace to the count.
func (x *Explorer) countClass() {
	if x.classes == nil {
		x.classes = map[[16]byte]struct{}{}
	}
	if len(x.classes) >= MaxCountedTraces {
		x.classesPartial = true
		return
	}
	x.classes[x.class()] = struct{}{}
}

// tooDeep applies the depth heuristic (thesis §3.4.6 (a)): a branch far
// deeper than the completed ones is an infinite loop. The first branch is
// bounded by the machine (TOO_DEEP_0TH_BRANCH).
func (x *Explorer) tooDeep() *record.Bug {
	if x.opt.NoDepthHeuristic || x.executed == 0 {
		return nil
	}
	avg := float64(x.depthSum) / float64(x.executed)
	factor := float64(ProgressDepthFactor)
	if x.executed < ProgressConfidentBranches {
		factor *= math.Pow(ProgressBranchUncertainty, float64(ProgressConfidentBranches-x.executed))
	}
	depth := len(x.trs)
	if float64(depth) <= factor*avg {
		return nil
	}
	tr := x.trs[len(x.trs)-1]
	b := &record.Bug{
		Kind: record.BugLoop,
		Message: fmt.Sprintf("infinite loop: this interleaving reached %d preemption points, more than %.0f × the average depth %.1f of the %d completed interleavings (thesis §3.4.6)",
			depth, factor, avg, x.executed),
		Thread: tr.Thread,
		Stack:  tr.Stack,
	}
	if len(tr.Stack) > 0 {
		b.PC = tr.Stack[0]
	}
	return b
}

// tag marks thread q for exploration at node i, through the filters:
// already explored or tagged, beyond the round's preemption bound (then
// the round is marked as having dropped a tag), refused by the strategy.
func (x *Explorer) tag(i int, q record.TID) {
	if x.opt.RetrySets {
		x.retryTag(i, q)
		return
	}
	n := &x.nodes[i]
	if !contains(n.explored, q) && !contains(n.tagged, q) && x.admits(i, record.Choice{Thread: q}) {
		n.tagged = append(n.tagged, q)
	}
}

// admits reports whether choice c may be tagged or injected at node i:
// within the round's preemption bound (beyond it, the round is marked as
// having dropped a tag) and not refused by the strategy.
func (x *Explorer) admits(i int, c record.Choice) bool {
	n := &x.nodes[i]
	if n.pre+n.cost(c.Thread) > x.bound {
		x.dropped = true
		return false
	}
	return !x.strat.Skip(x, i, c)
}

func remove(ts []record.TID, t record.TID) []record.TID {
	for i, u := range ts {
		if u == t {
			return append(ts[:i:i], ts[i+1:]...)
		}
	}
	return ts
}

func copyBranch(b *Branch) *Branch {
	c := *b
	c.Transitions = append([]*record.Transition(nil), b.Transitions...)
	c.Choices = append([]record.Choice(nil), b.Choices...)
	c.Preempted = append([]bool(nil), b.Preempted...)
	c.NewPairs = append([][2]int(nil), b.NewPairs...)
	c.x = nil
	return &c
}

// SnapshotAt is the machine's state at the PP before transition i of the
// current branch (valid during OnBranch, for re-running a transition).
func (x *Explorer) SnapshotAt(i int) (record.Snapshot, error) {
	if x.nodes[i].snap != nil {
		return x.nodes[i].snap, nil
	}
	end := x.m.Snapshot() // rebuilding moves the machine
	defer x.m.Restore(end)
	return x.snapAt(i)
}

// Estimate returns the estimates as of the last interleaving.
// Under a sampling strategy only the counts and times are known.
func (x *Explorer) Estimate() estimator.Estimate { return x.estimate(x.est.Current()) }

func (x *Explorer) estimate(e estimator.Estimate) estimator.Estimate {
	if x.sampling {
		e.Proportion, e.Size, e.Total = 0, 0, 0
		e.ModelProportion, e.ModelTotal = 0, 0
	}
	return e
}

// probe handles the threads the end of the execution cut off. When the
// last transition ended the program (a bug, or an exit while other threads
// could still run), what those threads would have done never ran, so no
// conflict can involve it. Flanagan and Godefroid consider the next
// transition of every enabled thread; since a failure also hides the
// threads' later transitions, probe each thread's whole remaining run
// alone, from the node before the last transition, tag its conflicts with
// the branch, and drop it. (Landslide stops at the first bug, where this
// matters less; exploring past bugs and programs that exit with threads
// still running need it.)
func (x *Explorer) probe() error {
	n := len(x.trs)
	if n == 0 || len(x.nodes) != n {
		return nil // a loop bug or budget cut the branch while running on
	}
	last := &x.nodes[n-1]
	var others []record.TID
	for _, p := range last.runnable {
		if p != x.trs[n-1].Thread {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		return nil
	}
	// Ending the program disabled them: the last transition is dependent
	// with each one's next (thesis §3.4.2, "enabled_by").
	for _, p := range others {
		x.tag(n-1, p)
	}
	end := x.m.Snapshot() // the caller's OnBranch looks at the end state
	defer x.m.Restore(end)
	lastSnap, err := x.snapAt(n - 1)
	if err != nil {
		return err
	}
	for _, p := range others {
		x.m.Restore(lastSnap)
		for k := 0; k < maxProbe; k++ {
			if done, _ := x.m.Ended(); done || !contains(x.m.Runnable(), p) {
				break
			}
			tr, err := x.m.Step(record.Choice{Thread: p})
			if err != nil && !errors.Is(err, record.ErrBudget) {
				return fmt.Errorf("dpor: probing thread %d: %w", p, err)
			}
			j := len(x.trs)
			x.trs = append(x.trs, tr)
			x.an.add(tr, last.runnable)
			for _, i := range append(x.an.conf[j], x.an.dis[j]...) {
				if int(i) < n {
					tagPair(x, int(i), j)
				}
			}
			if err != nil {
				break
			}
		}
		tagLockWaits(x, n) // p may have stopped at a lock
		x.an.truncate(n)
		x.trs = x.trs[:n]
	}
	return nil
}
