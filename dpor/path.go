package dpor

import "landslide/record"

// Path is what a strategy sees of an exploration and what it may do to
// it. The Explorer implements it, and a strategy is given nothing else:
// the explorer's own bookkeeping (rounds and bounds, the estimator, the
// trace count, the budget, the frontier's encoding) can change, or a
// subtree of the tree be handed to another worker, without touching a
// strategy. The methods are unexported: only this package's strategies
// implement Strategy.
//
// A strategy reads the current branch (its nodes, the transitions and
// choices between them, and their happens-before and conflict analysis)
// and marks its nodes only through tag, tagChoice, inject and newWalk,
// which pass every mark through the explorer's filters (explored or
// tagged already, the round's preemption bound, the strategy's own
// Skip, retry sets). The machine is there for the strategies that run
// from a node to see what a transition does there (probe, optimal
// DPOR's re-runs): between branches it is at the branch's end, and a
// strategy that moves it puts it back before its Branch returns.
type Path interface {
	// depth is the branch's nodes: the root, and one after each
	// transition that did not end the execution.
	depth() int
	// node is node i of the branch (0 <= i < depth()), to read.
	node(i int) *node
	// transitions are the branch's transitions: transition k runs from
	// node k. The slice is the explorer's, to read.
	transitions() []*record.Transition
	// branchChoices are the choices that ran the transitions (transition
	// k by choice k; a probe adds transitions, not choices). The slice is
	// the explorer's, to read.
	branchChoices() []record.Choice
	// analysis is the branch's happens-before and conflict analysis.
	analysis() *analysis
	// divergence is the first transition not shared with the previous
	// branch (Branch.Divergence).
	divergence() int
	// executions is the executions completed before the current one
	// (during Branch: before it, too), rounds included.
	executions() int
	// depthTotal is the sum of the lengths of those executions.
	depthTotal() int
	// stm: Spec.STM, the transactional mode without RETRY aborts.
	stm() bool

	// machine is the machine under test; snapAt is its state at node i
	// of the branch.
	machine() record.Machine
	snapAt(i int) (record.Snapshot, error)

	// tag marks thread q to run at node i in a later branch; tagAll
	// every runnable thread there; tagChoice a choice with its value
	// (an abort status, a nondet value); inject an _xbegin's abort
	// status or a nondet call's value for thread q. injectConflicts
	// injects the CONFLICT aborts the conflicting pairs call for
	// (htm.go).
	tag(i int, q record.TID)
	tagAll(i int)
	tagChoice(i int, c record.Choice)
	inject(i int, q record.TID, v int64)
	injectConflicts(pairs [][2]int)
	// newWalk makes the next execution a new walk from the root: it
	// forgets the root's explored and tagged threads and tags q there.
	newWalk(q record.TID)
	// restrict notes that the strategy left a switch point out this
	// round (StrategyInfo.Restricted).
	restrict()
	// setCaveat sets Result.Caveat.
	setCaveat(c string)

	// What the explorer knows of _xbegin results and nondet values
	// (htm.go, nondet.go), and of retry sets (retry.go): the race
	// being reversed (noteRace, until endRace), whether a thread's
	// subtrees at a node are done or it ran or is tagged there.
	atXbegin(i int, q record.TID) bool
	retryAt(i int, q record.TID) bool
	choiceValue(j int) int64
	nextValue(i, j int, p record.TID) int64
	nodeValues(i int, q record.TID) int64
	noteRace(i, j int)
	endRace()
	retryDone(i int, q record.TID) bool
	ranOrTagged(i int, q record.TID) bool
	// cutOff: the branch's last transition ended the program with other
	// threads alive.
	cutOff() bool
	// probe runs, alone, each thread the branch's end cut off, and tags
	// its conflicts with the branch (see (*Explorer).probe).
	probe() error
}

var _ Path = (*Explorer)(nil)

func (x *Explorer) depth() int                        { return len(x.nodes) }
func (x *Explorer) node(i int) *node                  { return &x.nodes[i] }
func (x *Explorer) transitions() []*record.Transition { return x.trs }
func (x *Explorer) branchChoices() []record.Choice    { return x.choices }
func (x *Explorer) analysis() *analysis               { return &x.an }
func (x *Explorer) divergence() int                   { return x.lastDiv }
func (x *Explorer) executions() int                   { return x.executed }
func (x *Explorer) depthTotal() int                   { return x.depthSum }
func (x *Explorer) stm() bool                         { return x.opt.STM }
func (x *Explorer) machine() record.Machine           { return x.m }
func (x *Explorer) restrict()                         { x.restricted = true }
func (x *Explorer) setCaveat(c string)                { x.caveat = c }
func (x *Explorer) endRace()                          { x.race = race{} }

func (x *Explorer) newWalk(q record.TID) {
	root := &x.nodes[0]
	root.explored, root.tagged = nil, nil
	x.tag(0, q)
}
