package dpor

import (
	"errors"
	"fmt"
	"math"
	"time"

	"landslide/estimator"
	"landslide/record"
)

// Mode selects the reduction.
type Mode uint8

// Modes.
const (
	DPOR Mode = iota // dynamic partial-order reduction (the default)
	Full             // no reduction: every runnable thread at every PP
)

func (m Mode) String() string {
	if m == Full {
		return "full"
	}
	return "dpor"
}

// maxProbe bounds a probe's transitions (see probe).
const maxProbe = 1000

// Thesis constants for the depth heuristic (§3.4.6 (a), check_infinite_loop).
const (
	ProgressDepthFactor       = 20            // depth > factor × average depth of completed branches
	ProgressConfidentBranches = 10            // before this many branches the factor is scaled up
	ProgressBranchUncertainty = 1.1           // by this, per missing branch
	UnlimitedBound            = math.MaxInt32 // Options.MaxBound: no cap
)

// Options configure an exploration. The zero value is DPOR with sleep
// sets, no bound, stopping at the first bug.
type Options struct {
	Mode Mode
	// NoSleepSets turns the sleep-set refinement off.
	NoSleepSets bool
	// AllPairs reverses every conflicting pair not ordered by the
	// scheduling happens-before, as the thesis does, instead of only the
	// direct races (the default; see analysis.add).
	AllPairs bool
	// ICB explores by iterative context bounding: all interleavings with at
	// most 0 preemptions, then at most 1, …, up to MaxBound (or until a
	// round drops no tag). MaxBound 0 with ICB means bound 0 only; use
	// UnlimitedBound for "until complete".
	ICB      bool
	MaxBound int
	// MaxInterleavings stops after that many interleavings (0: no limit).
	MaxInterleavings int
	// KeepGoing continues after a bug (the default stops at the first).
	KeepGoing bool
	// NoDepthHeuristic turns off the too-deep infinite-loop heuristic.
	NoDepthHeuristic bool
	// Now is the clock used for the time estimates (default: wall time
	// since the exploration started). It never influences what is explored.
	Now func() time.Duration
	// OnBranch sees every completed interleaving, while the machine is
	// still at its end; returning false stops the exploration.
	OnBranch func(*Branch) bool
	// ShouldStop is polled after each interleaving (a time budget).
	ShouldStop func() bool
	// Checkpoint, when set, offers a stored machine state on the way to
	// the end of prefix (the current branch's first choices): it returns
	// the state after the first depth choices, or nil. A resumed explorer
	// uses it to rebuild a node's snapshot without re-executing from the
	// program's start (see Resume).
	Checkpoint func(prefix []record.Choice) (depth int, s record.Snapshot)
}

// Branch is one completed interleaving. Its slices belong to the explorer
// and are valid only during the OnBranch call.
type Branch struct {
	N           int // 1-based, over the whole exploration
	Round       int // ICB bound of this round (0 without ICB)
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
	Budget     bool // the execution ran out of instructions
	Estimate   estimator.Estimate
}

// Result is what an exploration established.
type Result struct {
	Interleavings int // distinct interleavings (the last ICB round's)
	Executed      int // all interleavings run, ICB rounds included
	Transitions   int // transitions executed
	Complete      bool
	// Bounded: ICB stopped at MaxBound with tags the bound dropped, so the
	// state space is verified only up to Bound preemptions.
	Bounded bool
	Bound   int
	Bug     *record.Bug
	// BugBranch is a copy of the failing branch (nil without a bug).
	BugBranch *Branch
	Budgeted  int // branches that ran out of instructions
	Estimate  estimator.Estimate
	Stopped   string // why an incomplete exploration stopped
	// Depth is the number of transitions of the last interleaving.
	Depth int
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
}

// Explorer explores one machine.
type Explorer struct {
	m   record.Machine
	opt Options

	nodes     []node
	trs       []*record.Transition
	choices   []record.Choice
	preempted []bool
	an        analysis
	est       estimator.Path

	bound     int
	dropped   bool // a tag was dropped by the bound this round
	branches  int  // completed branches this round
	executed  int
	nTrans    int
	depthSum  int
	lastDiv   int
	budgeted  int  // branches that ran out of instructions
	resumed   bool // Resume built the branch: Run starts by choosing the next one
	lastStamp time.Duration
	start     time.Time
}

// New prepares an exploration of m from its current state (which must be
// a PP: the program's start).
func New(m record.Machine, opt Options) *Explorer {
	x := &Explorer{m: m, opt: opt}
	x.an.allPairs = opt.AllPairs
	if x.opt.Now == nil {
		x.start = time.Now()
		x.opt.Now = func() time.Duration { return time.Since(x.start) }
	}
	return x
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

// marked counts the children explored or tagged.
func (n *node) marked() int { return len(n.explored) + len(n.tagged) }

// pushNode records the PP the machine is at.
func (x *Explorer) pushNode(prev record.TID, vol bool, pre int) {
	n := node{snap: x.m.Snapshot(), runnable: x.m.Runnable(), prev: prev, voluntary: vol, pre: pre}
	if x.opt.Mode == Full {
		n.tagged = append([]record.TID(nil), n.runnable...)
	}
	x.nodes = append(x.nodes, n)
	if x.opt.ICB && x.opt.Mode != Full {
		// Within the bound, ICB schedules every thread at every PP where
		// the bound allows it (CHESS's iterative context bounding):
		// DPOR's tags with BPOR are not complete within a bound (the
		// tests found interleavings with B preemptions they miss).
		for _, q := range n.runnable {
			x.tag(len(x.nodes)-1, q)
		}
	}
}

// Run explores until the state space is complete, a bug is found (unless
// KeepGoing), or a limit stops it.
func (x *Explorer) Run() (*Result, error) {
	res := &Result{}
	var pending record.TID // the tag to run at the deepest node
	if x.resumed {
		res.Executed, res.Transitions, res.Interleavings = x.executed, x.nTrans, x.branches
		res.Estimate, res.Bound, res.Budgeted = x.est.Current(), x.bound, x.budgeted
		res.Depth = len(x.trs)
	} else {
		if x.opt.ICB {
			x.bound = 0
		} else {
			x.bound = UnlimitedBound
		}
		if done, _ := x.m.Ended(); done {
			return nil, errors.New("the machine has already ended")
		}
		x.pushNode(0, false, 0)
		x.est.Push(0)
	}
	x.lastStamp = x.opt.Now()
	for {
		if x.resumed {
			x.resumed = false // the frontier's branch was counted by the run that stored it
		} else {
			br, err := x.runBranch(pending)
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
			res.Depth = len(br.Transitions)
			keep := true
			if x.opt.OnBranch != nil {
				keep = x.opt.OnBranch(br)
			}
			if br.Bug != nil && res.Bug == nil {
				res.Bug = br.Bug
				res.BugBranch = copyBranch(br)
			}
			if br.Bug != nil && !x.opt.KeepGoing {
				res.Stopped = "bug"
				return res, nil
			}
			if !keep {
				res.Stopped = "stopped"
				return res, nil
			}
		}
		// The limits are checked before a tag is taken, so that the
		// explorer's state (Frontier) stays that of the last interleaving.
		if !x.hasNext() {
			if x.opt.ICB && x.dropped && x.bound < x.opt.MaxBound {
				if err := x.restart(x.bound + 1); err != nil {
					return nil, err
				}
				pending = 0
				continue
			}
			res.Complete = !(x.opt.ICB && x.dropped)
			res.Bounded = x.opt.ICB && x.dropped
			if !res.Complete {
				res.Stopped = fmt.Sprintf("preemption bound %d reached", x.bound)
			}
			return res, nil
		}
		if x.opt.MaxInterleavings > 0 && x.executed >= x.opt.MaxInterleavings {
			res.Stopped = "interleaving limit"
			return res, nil
		}
		if x.opt.ShouldStop != nil && x.opt.ShouldStop() {
			res.Stopped = "budget"
			return res, nil
		}
		d, q := x.next()
		if err := x.backtrack(d); err != nil {
			return nil, err
		}
		pending = q
	}
}

// restart begins a new ICB round with the given bound.
func (x *Explorer) restart(bound int) error {
	if err := x.backtrack(0); err != nil {
		return err
	}
	root := &x.nodes[0]
	root.explored, root.tagged, root.chosen = nil, nil, 0
	x.est = estimator.Path{}
	x.est.Push(0)
	x.bound = bound
	x.dropped = false
	x.branches = 0
	x.lastDiv = 0
	if x.opt.Mode != Full {
		for _, q := range root.runnable {
			x.tag(0, q)
		}
	} else {
		root.tagged = append([]record.TID(nil), root.runnable...)
	}
	return nil
}

// hasNext reports whether some node has a tagged, unexplored child.
func (x *Explorer) hasNext() bool {
	for i := range x.nodes {
		if len(x.nodes[i].tagged) > 0 {
			return true
		}
	}
	return false
}

// next takes the first tag of the deepest node that has one (hasNext
// must hold).
func (x *Explorer) next() (int, record.TID) {
	for d := len(x.nodes) - 1; d >= 0; d-- {
		if n := &x.nodes[d]; len(n.tagged) > 0 {
			q := n.tagged[0]
			n.tagged = n.tagged[1:]
			return d, q
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
	for i := d + 1; i < len(x.nodes); i++ {
		x.nodes[i] = node{} // drop the snapshots
	}
	x.nodes = x.nodes[:d+1]
	x.trs = x.trs[:d]
	x.choices = x.choices[:d]
	x.preempted = x.preempted[:d]
	x.an.truncate(d)
	x.m.Restore(snap)
	x.lastDiv = d
	x.lastStamp = x.opt.Now()
	x.est.AddTime(x.lastStamp - t0)
	return nil
}

// runBranch runs from the deepest node to the end, first choosing pending
// there if set, then the machine's default choices, and analyses the
// branch.
func (x *Explorer) runBranch(pending record.TID) (*Branch, error) {
	br := &Branch{}
	for {
		n := &x.nodes[len(x.nodes)-1]
		q := pending
		pending = 0
		if q == 0 {
			q = x.m.Default().Thread
		}
		pre := n.pre + n.cost(q)
		n.chosen = q
		n.explored = append(n.explored, q)
		n.tagged = remove(n.tagged, q)
		x.preempted = append(x.preempted, n.cost(q) > 0)
		ch := record.Choice{Thread: q}
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
			br.Bug = bug
			break
		}
		x.pushNode(q, voluntary(tr.PP.Kind), pre)
		x.an.after(x.nodes[len(x.nodes)-1].runnable)
		if b := x.tooDeep(); b != nil {
			br.Bug = b
			break
		}
	}
	x.executed++
	x.branches++
	x.depthSum += len(x.trs)
	// The new interleaving's conflicts: tag alternatives.
	br.Divergence = x.lastDiv
	br.NewPairs = x.an.pairsFrom(x.lastDiv)
	if x.opt.Mode == DPOR {
		for _, p := range x.an.racesFrom(x.lastDiv) {
			x.tagPair(p[0], p[1])
		}
		for _, p := range x.an.disabledFrom(x.lastDiv) {
			x.tagPair(p[0], p[1])
		}
		if br.Bug != nil && len(x.nodes) == len(x.trs) {
			// A failure disables every other thread: the failing
			// transition is dependent with each earlier transition of
			// another thread that does not happen before it (the state
			// at the failure differs by which of them ran).
			j := len(x.trs) - 1
			x.an.failing = j
			for i := 0; i < j; i++ {
				if x.trs[i].Thread != x.trs[j].Thread && !x.an.hb(i, j) {
					x.tagPair(i, j)
				}
			}
		}
		x.tagDisabled()
		if err := x.probe(); err != nil {
			return nil, err
		}
	}
	for i := range x.nodes {
		x.est.SetMarked(i, x.nodes[i].marked())
	}
	br.N = x.executed
	if x.opt.ICB {
		br.Round = x.bound
	}
	br.Transitions = x.trs
	br.Choices = x.choices
	br.Preempted = x.preempted
	for _, p := range x.preempted {
		if p {
			br.Preemptions++
		}
	}
	br.Estimate = x.est.Leaf()
	return br, nil
}

// tagDisabled: a transition that disabled a runnable thread which then
// never ran again on this branch is a race that no later transition of
// that thread reveals; reorder them (the thread runs first at that node).
func (x *Explorer) tagDisabled() {
	for i := range x.trs {
		if i >= len(x.an.flips) {
			break
		}
		for _, u := range x.an.flips[i] {
			if !contains(x.an.before[i], u) {
				continue // enabled, not disabled
			}
			ranLater := false
			for k := i + 1; k < len(x.trs); k++ {
				if x.trs[k].Thread == u {
					ranLater = true
					break
				}
			}
			if !ranLater {
				x.tag(i, u)
			}
		}
	}
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
					x.tagPair(int(i), j)
				}
			}
			if err != nil {
				break
			}
		}
		x.an.truncate(n)
		x.trs = x.trs[:n]
	}
	return nil
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

// tagPair applies the thesis's tagging rule to the conflict (i, j).
func (x *Explorer) tagPair(i, j int) {
	n := &x.nodes[i]
	p := x.trs[j].Thread
	if contains(n.runnable, p) {
		x.tag(i, p)
		return
	}
	for _, q := range n.runnable {
		if q != x.trs[i].Thread {
			x.tag(i, q)
		}
	}
}

// tag marks thread q for exploration at node i, through the filters.
func (x *Explorer) tag(i int, q record.TID) {
	n := &x.nodes[i]
	switch {
	case contains(n.explored, q) || contains(n.tagged, q):
	case n.pre+n.cost(q) > x.bound:
		x.dropped = true
	// Sleep sets are not used under a preemption bound: the explored
	// sibling that proves a subtree redundant may itself have been cut by
	// the bound (TestICBBoundedSoundness found such misses).
	case !x.opt.NoSleepSets && !x.opt.ICB && x.sleeping(i, q):
	default:
		n.tagged = append(n.tagged, q)
	}
}

// sleeping is the sleep-set check (equiv_already_explored): q's next
// transition from node i is t_n; if some ancestor k < i already explored q
// and every transition from k to i is independent of t_n, then running q
// at i is equivalent to a subtree already tested.
func (x *Explorer) sleeping(i int, q record.TID) bool {
	n := -1
	for k := i; k < len(x.trs); k++ {
		if x.trs[k].Thread == q {
			n = k
			break
		}
	}
	if n < 0 {
		return false
	}
	// t_n must be what q would run at i: nothing between (other than t_i,
	// the transition the tag reorders) may affect it.
	for m := i + 1; m < n; m++ {
		if x.an.dependent(m, n) {
			return false
		}
	}
	for k := i - 1; k >= 0; k-- {
		if x.trs[k].Thread == q || x.an.dependent(k, n) {
			return false
		}
		if contains(x.nodes[k].explored, q) {
			return true
		}
	}
	return false
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
func (x *Explorer) Estimate() estimator.Estimate { return x.est.Current() }
