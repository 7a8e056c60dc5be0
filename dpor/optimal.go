package dpor

import (
	"encoding/binary"
	"fmt"
	"slices"

	"landslide/record"
)

// Optimal DPOR: source sets and wakeup trees (Abdulla, Aronis, Jonsson
// and Sagonas, "Optimal dynamic partial order reduction", POPL 2014;
// JACM 2017, Algorithm 2). Where the dpor strategy tags one thread at the
// node before a race, this strategy inserts at that node the whole
// sequence that reverses the race, v = notdep(e, E).e′: the transitions
// of the branch after e that do not happen after e (those after e′ too,
// as in the paper and Nidhugg), then e′. Each node keeps those sequences
// as a wakeup tree (an ordered tree of transitions, one child per thread)
// and its sleep set (the threads whose subtrees are done, with the
// transition each ran there); the exploration below a node follows the
// tree's sequences first, its children in the order they were inserted
// (the explorer asks first). A sequence is inserted only when no
// thread asleep at the node is one of its weak initials (WI), and only
// where the tree holds no sequence it is already "redundant" with
// (insert[E](v, wut)). The result: each Mazurkiewicz trace of the
// transitions is explored once, and no execution ends with every
// runnable thread asleep (sleep-set blocked), which Result.SleepBlocked
// counts and the benchmarks assert to be 0.
//
// Programs where what a step touches depends on what it reads need one
// departure from the paper, whose events are fixed by the trace: e′
// moved before e may read other values and touch other bytes than the
// branch saw. Where e′ read or overwrote what e wrote (or e disabled it),
// the strategy runs v from the node to see what e′ does there (rerunSeq),
// and compares that with the sleeping threads and the tree; only if v
// cannot run there is e′ kept as a guess (open), which commutes with
// nothing. A node remembers its re-runs (optNode.reruns): later branches
// reverse the same races again with the same sequences. Comparing the branch's e′ instead lost final states on 7 of
// 3,300 random programs of the kind TestStateDependentAccesses runs.
//
// Two more things make it exact on those programs. Each branch reverses
// every race it holds, those an earlier branch reversed too, as the
// paper and Nidhugg do: a race's notdep now ends differently. And where
// v moves a transition that changed another thread's runnability before
// that thread's own earlier steps (a thread's exit wakes its joiner
// only if the joiner already waits), v is re-run whole, so that the
// tree holds what its transitions do there. Over 18,000 random programs
// (TestOptimalRandomPrograms with -optimal.seeds 60) optimal DPOR then
// reaches every final state and trace of full enumeration. (Variants
// tried and not kept: reversing only the new races lost a final state
// and two traces; without the re-run, lastzero(10) ended thousands of
// executions sleep-set blocked.)
//
// Transactional memory needs more departures, as a thread at an _xbegin
// has several next transitions (commit, or abort with a status), where
// the paper's processes have one: such a thread absent from a sequence
// is none of its weak initials (a continuation may run another
// outcome); a wakeup tree's children are explored in their order, aborts
// among them, before the aborts that are only a commit's siblings; where
// an abort runs, its commit is tagged too; and where every default
// transition is asleep, Pick runs an abort that is not. Before, optimal
// DPOR missed final states on 127 of 2,000 random programs with
// transactions (TestOptimalTransactions -optimal.txn 2000) and traces on
// 412; now on none and 3. It is not exact there: use the dpor strategy
// on TM programs.
//
// Transitions are the machine's (from a PP to the next), so "each trace
// once" is per the PP set: with every shared access a PP (the kernel's
// EveryAccess) a transition holds one shared access and the traces are
// those Nidhugg and GenMC count. Dependence is the analysis's: memory
// conflicts of the access sets, and a transition that changes another
// thread's runnability (creation, blocking, waking, a thread's exit for
// its joiner) is dependent with it.
//
// What a thread would run next is known only from an execution that ran
// it; where the strategy cannot know it (a thread that never ran again on
// the branch), it assumes dependence: more sequences, never fewer. The
// dpor strategy's safety nets for what a branch did not run (probe, the
// disabled threads, a failure's dependence on everything) tag threads
// without a sequence, as the dpor strategy does; the sleep sets still
// apply to them.
func init() {
	register("optimal", "optimal DPOR: source sets and wakeup trees, each trace once (Abdulla et al. 2014; the default)", true, func(s Spec) (Strategy, error) {
		if err := onlyParams(s, "optimal", "fallback"); err != nil {
			return nil, err
		}
		if s.RetrySets {
			return nil, fmt.Errorf("retry sets are a reduction of the dpor strategy: not with optimal DPOR")
		}
		if s.AbortCodes {
			return nil, errNoConflictAborts("optimal DPOR")
		}
		return &optimalStrategy{}, nil
	})
}

// optimalBlockedCaveat is Result.Caveat where optimal DPOR ended an
// execution sleep-set blocked, which its wakeup trees exclude: the
// program broke an assumption of the algorithm's, and the exploration
// may have left traces out. (On ref/paraguay under the mutex PPs it once
// ended 8 executions so and reached 57,920 fewer Mazurkiewicz traces
// than the dpor strategy; the cause was the machine's, not the
// algorithm's: a waiter's own reads of the wait node on its stack, and
// yield(tid)'s look at tid's run state, were no dependences. With them
// both strategies reach the same 161,632 traces and none ends blocked.
// Programs that deadlock still end some executions blocked, with every
// trace of the dpor strategy's reached: BENCHMARKS, "Exploration rate
// and the default DPOR's redundancy"; nondet values too: deposits(3)
// ends 4 of 25 so and reaches all 21 of full enumeration's.)
const optimalBlockedCaveat = "optimal DPOR's guarantee does not hold on this program: %d executions ended with every runnable thread asleep, which its wakeup trees exclude where it is exact, so it may have left interleavings out (the dpor strategy explores them)"

// blockedCaveat implements blockedCaveater.
func (*optimalStrategy) blockedCaveat(n int) string { return fmt.Sprintf(optimalBlockedCaveat, n) }

// OptimalTMCaveat is Result.Caveat where optimal DPOR met an _xbegin.
const OptimalTMCaveat = "optimal DPOR is not exact on programs with transactions: it can miss interleavings in which transactions abort (the dpor strategy explores them all)"

// wnode is a node of a wakeup tree: the transition ev (none at the root)
// and the sequences that continue after it, in exploration order.
type wnode struct {
	ev   event
	kids []*wnode
}

// optNode is the strategy's state at one node of the path.
type optNode struct {
	sleep []event // threads asleep here, with the transition each runs here
	wut   wnode   // the wakeup tree's children still to explore (the root)
	cur   *event  // the transition of the child being explored
	// reruns are rerunSeq's results from this node, by the choices of
	// the sequence run (rerunKey): what each transition touched and
	// whose runnability it changed, or nil where the sequence could not
	// run. The machine is deterministic and the node's state is the same
	// while the node is on the path, so a later branch reversing a race
	// at this node with the same sequence (each branch reverses its old
	// races again) gets the same answer without running it (rerun).
	reruns map[string][]rerunStep
}

// rerunStep is what one transition of a re-run sequence did (its event's
// keys and flips; the rest of the event is the sequence's own).
type rerunStep struct {
	keys  []keyMask
	flips []record.TID
}

// maxReruns caps the sequences a node remembers (a node near the root
// sees many over the exploration).
const maxReruns = 512

// rerunCache turns the memo of reruns on (tests compare without it).
var rerunCache = true

type optimalStrategy struct {
	nodes []optNode
	// conservative: a branch exited with another thread alive (cutOff),
	// so a thread asleep at a node may never run in
	// an extension of a wakeup sequence: the paper's processes always
	// run to their end, which lets weakInitial take a sleeping thread
	// absent from a sequence as covering it. From then on it does not.
	// absentUsed: it did before that (a decision the restart undoes);
	// restart: explore the state space again from the root.
	conservative, absentUsed, restart bool
	// seq is reverse's buffer for the sequence it builds, seq2 the one
	// rerunSeq writes the sequence it ran into: nothing keeps either
	// (the wakeup tree's insert copies the events it keeps).
	seq, seq2 []event
	// rerunEnd is the branch's end state while the re-runs move the
	// machine (endReruns restores it).
	rerunEnd record.Snapshot
	// rerunKey is rerun's buffer for a sequence's key; memoHits counts
	// the re-runs the memo answered.
	rerunKey []byte
	memoHits int
}

// restartNow implements restarter: optimal DPOR learned, after deciding
// with weakInitial's absent case, that the program can end with threads
// alive; its earlier decisions may have left traces out, so it explores
// again from the root, conservatively.
func (s *optimalStrategy) restartNow() bool {
	r := s.restart
	s.restart = false
	return r
}

// weakInitial is the package function, with the absent case only while
// no branch has cut a thread off (see conservative).
func (s *optimalStrategy) weakInitial(p *event, v []event) bool {
	ok, absent := weakInitial(p, v, !s.conservative)
	if ok && absent {
		s.absentUsed = true
	}
	return ok
}

func (*optimalStrategy) Bound(r int) (int, bool) { return onlyRound0(r) }

// Reached sets up node i: the root's state is empty; a child's sleep set
// is its parent's sleepers independent of the transition that led here,
// and its wakeup tree the subtree of that transition's thread.
func (s *optimalStrategy) Reached(x Path, i int) {
	if i == 0 {
		s.nodes = append(s.nodes[:0], optNode{})
		return
	}
	ev, sub := s.advance(x, i-1)
	if ev.xbegin && ev.value != 0 {
		// An abort ran (where a wakeup sequence put it, or Pick): its
		// commit is explored there too, as a commit's abort is
		// (injectRetry). A sequence through an abort stands for its
		// commit as much as the paper's deterministic processes have
		// only the one transition.
		x.tag(i-1, ev.thread)
	}
	n := optNode{}
	if sub != nil {
		n.wut.kids = sub.kids
	}
	for _, q := range s.nodes[i-1].sleep {
		if !q.dependent(&ev) {
			n.sleep = append(n.sleep, q)
		}
	}
	if len(x.node(i).xb) > 0 {
		x.setCaveat(OptimalTMCaveat)
	}
	// A sequence whose next thread cannot run here was built from a
	// wrong guess of what it would do (see the package comment on
	// transitions): drop it; the race behind it is found again.
	n.wut.kids = slices.DeleteFunc(slices.Clone(n.wut.kids), func(k *wnode) bool { return !contains(x.node(i).runnable, k.ev.thread) })
	s.nodes = append(s.nodes, n)
	for _, kid := range n.wut.kids {
		x.tagChoice(i, kid.ev.choice())
	}
}

// advance notes that transition i of the branch is node i's current
// child: the previous one's subtree is done, so its thread goes to sleep
// there, and the child's own sequences leave the wakeup tree. It returns
// the child's event and its subtree (nil if it was not in the tree). It
// cuts the strategy's nodes to the path's first i+1.
func (s *optimalStrategy) advance(x Path, i int) (event, *wnode) {
	s.nodes = s.nodes[:i+1]
	p := &s.nodes[i]
	ev := eventAt(x, i)
	if p.cur != nil && p.cur.choice() == ev.choice() && !p.cur.fresh {
		return ev, nil // already noted (Branch after a branch that ended at i)
	}
	if p.cur != nil && !p.cur.variant {
		// A variant does not sleep: the node explores its siblings
		// outside the wakeup tree's order, so "its subtree is done"
		// would not mean what the wakeup sequences rely on.
		p.sleep = append(p.sleep, *p.cur)
	}
	p.cur = &ev
	for k, kid := range p.wut.kids {
		if kid.ev.runs(&ev) {
			p.wut.kids = slices.Delete(slices.Clone(p.wut.kids), k, k+1)
			return ev, kid
		}
	}
	return ev, nil
}

// Pick follows the wakeup tree; past its end, the machine's default
// thread unless it is asleep, then the first runnable thread awake. With
// every runnable thread asleep the branch is sleep-set blocked.
func (s *optimalStrategy) Pick(x Path) record.Choice {
	i := x.depth() - 1
	n := &s.nodes[i]
	if len(n.wut.kids) > 0 {
		return n.wut.kids[0].ev.choice()
	}
	if d := x.machine().Default().Thread; d != 0 && !s.asleep(i, record.Choice{Thread: d}) {
		return record.Choice{Thread: d}
	}
	for _, q := range x.node(i).runnable {
		if c := (record.Choice{Thread: q}); !s.asleep(i, c) {
			return c
		}
	}
	// Every thread's default transition is asleep. A transaction's
	// abort may not be: its commit's subtree does not hold it, and an
	// abort is otherwise run only as a commit's sibling (injectRetry)
	// or where a wakeup sequence puts it.
	for _, q := range x.node(i).runnable {
		if c := (record.Choice{Thread: q, Value: record.XabortRetry}); x.retryAt(i, q) && !s.asleep(i, c) {
			return c
		}
	}
	return record.Choice{Thread: abandon}
}

func (s *optimalStrategy) asleep(i int, c record.Choice) bool {
	for k := range s.nodes[i].sleep {
		if s.nodes[i].sleep[k].choice() == c {
			return true
		}
	}
	return false
}

// first is the wakeup tree's first child at node i that is tagged (or,
// with a value, injected) there: the tree's children are explored in the
// order they were inserted, an abort among them. Injected choices that
// are not in the tree (a commit's abort, a nondet call's other values:
// siblings of the transition that ran) come after the tree's children.
func (s *optimalStrategy) first(x Path, i int) (record.Choice, bool) {
	n := x.node(i)
	if i >= len(s.nodes) {
		return record.Choice{}, false
	}
	for _, kid := range s.nodes[i].wut.kids {
		ch := kid.ev.choice()
		if ch.Value == 0 && contains(n.tagged, ch.Thread) || ch.Value != 0 && slices.Contains(n.inject, ch) {
			return ch, true
		}
	}
	return record.Choice{}, false
}

// Skip refuses a tag of a choice asleep at the node.
func (s *optimalStrategy) Skip(x Path, i int, c record.Choice) bool {
	return i < len(s.nodes) && s.asleep(i, c)
}

// Branch inserts, for each new race e ⋖ e′ of the branch, the sequence
// that reverses it at the node before e, then applies the dpor strategy's
// safety nets.
func (s *optimalStrategy) Branch(x Path, br *Branch) error {
	trs := x.transitions()
	an := x.analysis()
	if !s.conservative && x.cutOff() {
		s.conservative = true
		if s.absentUsed {
			s.restart = true
			return nil
		}
	}
	if n := len(trs); n == x.depth() {
		s.advance(x, n-1) // the branch ended after the last node's transition
	} else {
		s.nodes = s.nodes[:x.depth()]
	}
	evs := make([]event, len(trs))
	for k := range evs {
		evs[k] = eventAt(x, k)
	}
	// The re-runs of this branch's reversals move the machine: one
	// snapshot of its end state, taken at the first, brings it back
	// after the last (not one per re-run).
	defer s.endReruns(x)
	for _, p := range an.racesFrom(0) {
		s.reverse(x, evs, lockRace(x, p[0], p[1]), p[1])
	}
	for _, p := range an.disabledFrom(0) {
		s.reverse(x, evs, p[0], p[1])
	}
	if br.Bug != nil && x.depth() == len(trs) {
		// A failure is dependent with every transition of another thread
		// (see dporStrategy.Branch): it races with those that do not
		// happen before it.
		j := len(trs) - 1
		an.failing = j
		for i := 0; i < j; i++ {
			if trs[i].Thread != trs[j].Thread && !an.happensAfter(i, j) {
				s.reverse(x, evs, i, j)
			}
		}
	}
	s.endReruns(x)
	tagDisabled(x)
	tagLockWaits(x, len(trs))
	return x.probe()
}

// endReruns brings the machine back to the branch's end if re-runs moved
// it.
func (s *optimalStrategy) endReruns(x Path) {
	if s.rerunEnd != nil {
		x.machine().Restore(s.rerunEnd)
		s.rerunEnd = nil
	}
}

// reverse inserts at node i the sequence v = notdep(e_i).e_j (every
// transition of the branch after i that does not happen after it, in the
// branch's order, then j), unless a thread asleep there is a weak
// initial of it (then an explored subtree already holds its reversal).
func (s *optimalStrategy) reverse(x Path, evs []event, i, j int) {
	if i >= len(s.nodes) || j >= len(evs) {
		return
	}
	v := s.seq[:0]
	defer func() { s.seq = v[:0] }()
	moved := false // a transition of v changed another thread's runnability, which v moved
	for k := i + 1; k < len(evs); k++ {
		if k != j && !x.analysis().happensAfter(i, k) {
			v = append(v, evs[k])
			moved = moved || flipsMoved(x, i, k)
		}
	}
	last := evs[j]
	if last.variant && !x.atXbegin(j, last.thread) {
		// The reversed transition may run otherwise: its nondet value
		// is open.
		last.value, last.fresh = 0, true
	}
	if touchesWritten(&evs[j], &evs[i]) || contains(evs[i].flips, last.thread) || moved {
		// e′ read or overwrote what e wrote, or e disabled it: before
		// e it may touch other bytes (what a step touches can depend
		// on what it reads). Or v moved a transition that changed a
		// thread's runnability before that thread's own steps. Run v
		// there to see what it does.
		if out, ok := s.rerun(x, i, append(v, last), s.seq2); ok {
			s.seq2 = v[:0] // the two buffers swap
			v, last = out[:len(out)-1], out[len(out)-1]
		} else {
			last.open = true
		}
	}
	v = append(v, last)
	n := &s.nodes[i]
	for k := range n.sleep {
		if s.weakInitial(&n.sleep[k], v) {
			return
		}
	}
	if !contains(x.node(i).runnable, v[0].thread) {
		// Not a race the sequence can reverse (only a failure's can be
		// so, through what the failure cut short): tag as dpor does.
		tagPair(x, i, j)
		return
	}
	if first, added := n.wut.insert(v, s.weakInitial); added {
		x.tagChoice(i, first)
	}
}

// weakInitial reports whether p (whose next transition is ev) is a weak
// initial of v: its first transition in v follows nothing it depends on,
// or, absent from v (absent reports this case, which absentOK allows),
// its next transition commutes with all of v. Its
// first transition in v that p does not stand for (another variant, or
// an open one where p's is not) is another transition: p is no initial
// then. Absent from v, p commutes with nothing open; and p at an
// _xbegin is none: the paper's processes are deterministic, so every
// extension of v runs p's next transition, but here an extension may run
// another outcome of that _xbegin (a commit where p aborts, or the other
// way round), which p's explored subtree does not hold.
func weakInitial(p *event, v []event, absentOK bool) (ok, absent bool) {
	for m := range v {
		if v[m].thread != p.thread {
			continue
		}
		if !p.runs(&v[m]) {
			return false, false
		}
		for l := 0; l < m; l++ {
			if v[l].dependent(&v[m]) {
				return false, false
			}
		}
		return true, false
	}
	if !absentOK {
		return false, true
	}
	for m := range v {
		if p.open || p.xbegin || v[m].open || p.dependent(&v[m]) {
			return false, true
		}
	}
	return true, true
}

// touchesWritten reports whether a reads or writes a byte b writes.
func touchesWritten(a, b *event) bool {
	for i, j := 0, 0; i < len(a.keys) && j < len(b.keys); {
		switch {
		case a.keys[i].key < b.keys[j].key:
			i++
		case a.keys[i].key > b.keys[j].key:
			j++
		default:
			if b.keys[j].w&(a.keys[i].r|a.keys[i].w) != 0 {
				return true
			}
			i++
			j++
		}
	}
	return false
}

// flipsMoved reports whether transition k, which changed the runnability
// of other threads, has one of those threads' earlier transitions (from
// i on) left out of notdep(e_i): moved before them, it may change another
// thread's runnability, or none (a thread's exit wakes its joiner only if
// the joiner already waits).
func flipsMoved(x Path, i, k int) bool {
	an := x.analysis()
	for _, t := range an.flips[k] {
		for m := i; m < k; m++ {
			if x.transitions()[m].Thread == t && (m == i || an.happensAfter(i, m)) {
				return true
			}
		}
	}
	return false
}

// rerun is rerunSeq, answered from node i's memo (optNode.reruns) when
// the same sequence of choices ran from there before.
func (s *optimalStrategy) rerun(x Path, i int, v, into []event) ([]event, bool) {
	if !rerunCache {
		return s.rerunSeq(x, i, v, into)
	}
	n := &s.nodes[i]
	key := s.rerunKey[:0]
	for k := range v {
		key = binary.LittleEndian.AppendUint32(key, uint32(v[k].thread))
		key = binary.AppendVarint(key, v[k].value)
	}
	s.rerunKey = key
	if steps, ok := n.reruns[string(key)]; ok {
		s.memoHits++
		if steps == nil {
			return nil, false
		}
		out := append(into[:0], v...)
		for k := range out {
			out[k].keys, out[k].flips = steps[k].keys, steps[k].flips
		}
		return out, true
	}
	out, ok := s.rerunSeq(x, i, v, into)
	if len(n.reruns) < maxReruns {
		var steps []rerunStep
		if ok {
			steps = make([]rerunStep, len(out))
			for k := range out {
				steps[k] = rerunStep{out[k].keys, out[k].flips}
			}
		}
		if n.reruns == nil {
			n.reruns = map[string][]rerunStep{}
		}
		n.reruns[string(key)] = steps
	}
	return out, ok
}

// rerunSeq runs v from node i on the machine and returns its transitions
// as they run there (the reversed side of a race last, run before the
// transition it raced with), written over into's array; it reports false
// when v cannot run there. The machine is left where the re-run stopped:
// the first re-run of a branch snapshots the branch's end, and Branch
// restores it after the last (endReruns).
func (s *optimalStrategy) rerunSeq(x Path, i int, v, into []event) ([]event, bool) {
	m := x.machine()
	step := m.Step
	if ss, ok := m.(record.ScratchStepper); ok {
		step = ss.StepScratch // the keys and flips below are copies
	}
	if s.rerunEnd == nil {
		s.rerunEnd = m.Snapshot() // endReruns restores it
	}
	snap, err := x.snapAt(i)
	if err != nil {
		return nil, false
	}
	m.Restore(snap)
	var after []record.TID
	out := append(into[:0], v...)
	before := m.Runnable()
	for k := range out {
		e := &out[k]
		if k > 0 {
			before = after // the state did not change since
		}
		if done, _ := m.Ended(); done || !contains(before, e.thread) {
			return nil, false
		}
		tr, err := step(e.choice())
		if err != nil {
			return nil, false
		}
		e.keys, e.flips = transitionKeys(tr), nil
		after = m.Runnable()
		ended, _ := m.Ended()
		for _, t := range before {
			if t != e.thread && (ended || !contains(after, t)) {
				e.flips = append(e.flips, t)
			}
		}
		for _, t := range after {
			if t != e.thread && !contains(before, t) {
				e.flips = append(e.flips, t)
			}
		}
	}
	return out, true
}

// insert adds v to the tree below root unless the tree already holds a
// sequence that v extends equivalently (insert[E](v, wut)): descend
// through the first child whose thread is a weak initial of what is left
// of v, removing that thread's first transition from it; a leaf reached,
// or nothing left, means v is covered; otherwise what is left becomes a
// new branch, the last child. It reports the choice of a new child of
// the root. It takes v apart (the caller's scratch; the tree keeps copies
// of the events).
func (root *wnode) insert(v []event, weakInitial func(p *event, v []event) bool) (record.Choice, bool) {
	cur := root
	rem := v // v is the caller's scratch: taken apart here
	for {
		next := (*wnode)(nil)
		for _, kid := range cur.kids {
			if weakInitial(&kid.ev, rem) {
				next = kid
				break
			}
		}
		if next == nil {
			cur.kids = append(slices.Clip(cur.kids), chain(rem))
			return rem[0].choice(), cur == root
		}
		if k := slices.IndexFunc(rem, func(e event) bool { return e.thread == next.ev.thread }); k >= 0 {
			rem = slices.Delete(rem, k, k+1)
		}
		if len(next.kids) == 0 || len(rem) == 0 {
			return record.Choice{}, false
		}
		cur = next
	}
}

// chain is the wakeup-tree branch that runs the sequence v.
func chain(v []event) *wnode {
	head := &wnode{ev: v[0]}
	tail := head
	for _, e := range v[1:] {
		n := &wnode{ev: e}
		tail.kids = []*wnode{n}
		tail = n
	}
	return head
}

// OptimalNode is the optimal strategy's state at one node, in a Frontier.
type OptimalNode struct {
	Sleep []FrontierEvent `msgpack:",omitempty"`
	Wut   []OptimalTree   `msgpack:",omitempty"` // the wakeup tree's children still to explore
	Cur   *FrontierEvent  `msgpack:",omitempty"`
}

// FrontierEvent is an event in a Frontier (optimal DPOR's and CB-DPOR's
// states): its keys and their read and write byte masks (Masks[i] = r |
// w<<8).
type FrontierEvent struct {
	Thread  record.TID
	Value   int64        `msgpack:",omitempty"`
	Fresh   bool         `msgpack:",omitempty"`
	Open    bool         `msgpack:",omitempty"`
	Variant bool         `msgpack:",omitempty"`
	Xbegin  bool         `msgpack:",omitempty"`
	Ends    bool         `msgpack:",omitempty"`
	Keys    []uint64     `msgpack:",omitempty"`
	Masks   []uint16     `msgpack:",omitempty"`
	Flips   []record.TID `msgpack:",omitempty"`
}

// OptimalTree is a wakeup-tree node in a Frontier.
type OptimalTree struct {
	Ev   FrontierEvent
	Kids []OptimalTree `msgpack:",omitempty"`
}

func saveTree(kids []*wnode) []OptimalTree {
	var out []OptimalTree
	for _, k := range kids {
		out = append(out, OptimalTree{Ev: k.ev.save(), Kids: saveTree(k.kids)})
	}
	return out
}

func loadTree(ts []OptimalTree) ([]*wnode, error) {
	var out []*wnode
	for i := range ts {
		ev, err := ts[i].Ev.load()
		if err != nil {
			return nil, err
		}
		kids, err := loadTree(ts[i].Kids)
		if err != nil {
			return nil, err
		}
		out = append(out, &wnode{ev: ev, kids: kids})
	}
	return out, nil
}

// save puts the strategy's state in a Frontier.
func (s *optimalStrategy) save(f *Frontier) {
	out := make([]OptimalNode, len(s.nodes))
	for i, n := range s.nodes {
		out[i].Sleep = saveEvents(n.sleep)
		out[i].Wut = saveTree(n.wut.kids)
		out[i].Cur = saveEventPtr(n.cur)
	}
	f.Optimal = out
	f.OptimalConservative = s.conservative
}

// load restores the state save put in f.
func (s *optimalStrategy) load(f *Frontier) error {
	ns, nodes := f.Optimal, len(f.Nodes)
	if len(ns) != nodes {
		return fmt.Errorf("%w: optimal DPOR state for %d nodes, the path has %d", ErrFrontier, len(ns), nodes)
	}
	s.nodes = make([]optNode, len(ns))
	s.conservative = f.OptimalConservative
	for i := range ns {
		n := &s.nodes[i]
		var err error
		if n.sleep, err = loadEvents(ns[i].Sleep); err != nil {
			return err
		}
		if n.wut.kids, err = loadTree(ns[i].Wut); err != nil {
			return err
		}
		if n.cur, err = loadEventPtr(ns[i].Cur); err != nil {
			return err
		}
	}
	return nil
}
