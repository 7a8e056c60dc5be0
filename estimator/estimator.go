package estimator

import "time"

// node is one PP of the current branch.
type node struct {
	usecs  float64 // time of the transition into this node (0 at the root)
	marked int     // children explored or tagged
	// Sums over the finished children.
	doneN    int
	doneProp float64
	doneTime float64
	// The sibling model (see Path.kappa): the corrected sums over the
	// finished children, the first finished child's time, and what the
	// RE predicted then for the children after it.
	donePropK, doneTimeK float64
	first, predRest      float64
}

// Estimate is the state of both estimators after a branch.
type Estimate struct {
	Branches   int     // completed branches (interleavings)
	Proportion float64 // WBE: fraction of the tree explored, 0..1
	Size       float64 // WBE: estimated number of interleavings
	Total      time.Duration
	Elapsed    time.Duration
	// The same two estimates with the unexplored siblings scaled by the
	// sibling model's factor Kappa (Path), for people's ETA (Smoother);
	// Quicksand reads the thesis's estimates above. Kappa is 1 until
	// enough subtrees have finished to learn it.
	ModelProportion float64
	ModelTotal      time.Duration
	Kappa           float64
}

// ETA is the estimated time left (never negative).
func (e Estimate) ETA() time.Duration {
	if e.Total < e.Elapsed {
		return 0
	}
	return e.Total - e.Elapsed
}

// Path holds the estimator state along the current branch. Nodes are
// indexed by depth: node 0 is the root (the first PP).
//
// The sibling model (§8.3's "modelling the sleep-set pruning"): both of
// the thesis's estimators assume a node's unexplored tagged children are
// as big as its explored ones. Under sleep sets they are smaller (each
// later child has more threads asleep; both over-estimate, §3.4.3), and
// so under a preemption bound (a later child has less of the bound
// left). The Path learns how far off that assumption is from the nodes
// that finished: for each, what the RE predicted for its children after
// the first when the first finished, (marked−1)·time(first), against
// what they took. kappa, the ratio of the sums, scales the unexplored
// children of the nodes on the branch in the model's estimates
// (Estimate.ModelProportion, ModelTotal).
type Path struct {
	nodes    []node
	branches int
	elapsed  time.Duration
	// The sibling model's evidence: the finished nodes' actual and
	// predicted time of their children after the first, and how many.
	restActual, restPred float64
	restNodes            int
}

// minKappaNodes is how many finished nodes with a prediction the sibling
// model needs before its factor departs from 1.
const minKappaNodes = 16

// kappa is the sibling model's factor: 1 until minKappaNodes finished
// nodes had a prediction, and never above 1. The model shrinks the
// unexplored siblings (sleep sets; a preemption bound, whose later
// children have less of it left); it does not grow them for the tags
// DPOR will add, which a factor on the siblings already tagged predicts
// badly (those come at the nodes that have few yet, retry sets re-explore
// a thread under another constraint: the runs of BENCHMARKS.md's "ETA
// calibration" that learned a factor above 1 were further off with it).
func (p *Path) kappa() float64 {
	if p.restNodes < minKappaNodes || p.restPred <= 0 {
		return 1
	}
	return min(max(p.restActual/p.restPred, 1.0/64), 1)
}

// Push adds a node below the deepest one, reached by a transition that
// took d (0 for the root).
func (p *Path) Push(d time.Duration) {
	p.nodes = append(p.nodes, node{usecs: float64(d), marked: 1})
	p.elapsed += d
}

// AddTime charges time that belongs to no transition (restoring a
// snapshot, analysis) to the elapsed total.
func (p *Path) AddTime(d time.Duration) { p.elapsed += d }

// SetMarked sets how many children of the node at depth i are explored or
// tagged (at least 1: the one on the branch).
func (p *Path) SetMarked(i, marked int) {
	if marked < 1 {
		marked = 1
	}
	p.nodes[i].marked = marked
}

// values computes the WBE proportion and the RE time of the subtree at
// depth i, given the values of its child on the branch.
func (n *node) values(childProp, childTime float64) (prop, est float64) {
	// A node has at least the children explored: retry sets explore a
	// thread again under another constraint, which marked counts once.
	m := float64(max(n.marked, n.doneN+1))
	prop = (n.doneProp + childProp) / m
	est = n.usecs + m/float64(n.doneN+1)*(n.doneTime+childTime)
	return prop, est
}

// modelValues is values in the sibling model: the unexplored children
// weigh kappa times an explored one.
func (n *node) modelValues(kappa, childProp, childTime float64) (prop, est float64) {
	seen := float64(n.doneN + 1)
	rest := kappa * max(float64(n.marked)-seen, 0)
	prop = (n.donePropK + childProp) / (seen + rest)
	est = n.usecs + (1+rest/seen)*(n.doneTimeK+childTime)
	return prop, est
}

// modelLeafValues is leafValues in the sibling model.
func (p *Path) modelLeafValues(stop int) (float64, float64) {
	if len(p.nodes) == 0 {
		return 0, 0
	}
	k := p.kappa()
	last := len(p.nodes) - 1
	prop, est := 1.0, p.nodes[last].usecs
	for i := last - 1; i >= stop; i-- {
		prop, est = p.nodes[i].modelValues(k, prop, est)
	}
	return prop, est
}

// leafValues computes the values of every node from the deepest one up;
// visit, when non-nil, sees each depth's values.
func (p *Path) leafValues(stop int, visit func(i int, prop, est float64)) (float64, float64) {
	if len(p.nodes) == 0 {
		return 0, 0
	}
	last := len(p.nodes) - 1
	prop, est := 1.0, p.nodes[last].usecs // the leaf: one branch
	if visit != nil {
		visit(last, prop, est)
	}
	for i := last - 1; i >= stop; i-- {
		prop, est = p.nodes[i].values(prop, est)
		if visit != nil {
			visit(i, prop, est)
		}
	}
	return prop, est
}

// Leaf records that the branch ending at the deepest node is complete and
// returns both estimates.
func (p *Path) Leaf() Estimate {
	p.branches++
	return p.Current()
}

// Current returns the estimates as of the last completed branch, with the
// branch in progress counted as one.
func (p *Path) Current() Estimate {
	prop, est := p.leafValues(0, nil)
	e := Estimate{Branches: p.branches, Proportion: prop, Total: time.Duration(est), Elapsed: p.elapsed}
	if prop > 0 {
		e.Size = float64(p.branches) / prop
	}
	mprop, mest := p.modelLeafValues(0)
	e.ModelProportion, e.ModelTotal, e.Kappa = mprop, time.Duration(mest), p.kappa()
	return e
}

// Backtrack ends the subtrees below depth d: the nodes deeper than d are
// finished and folded into node d's sums, and the branch continues from
// node d with another child.
func (p *Path) Backtrack(d int) {
	if d+1 >= len(p.nodes) {
		p.nodes = p.nodes[:d+1]
		return
	}
	// The nodes below d are finished: the sibling model learns from
	// each that had a prediction.
	var childTime float64
	prop, est := p.leafValues(d+1, func(i int, _, est float64) {
		if n := &p.nodes[i]; i+1 < len(p.nodes) && n.doneN > 0 {
			p.restActual += n.doneTime + childTime - n.first
			p.restPred += n.predRest
			p.restNodes++
		}
		childTime = est // node i's subtree: its parent's child on the branch
	})
	mprop, mest := p.modelLeafValues(d + 1)
	n := &p.nodes[d]
	n.doneN++
	n.doneProp += prop
	n.doneTime += est
	n.donePropK += mprop
	n.doneTimeK += mest
	if n.doneN == 1 {
		n.first = est
		n.predRest = float64(n.marked-1) * est
	}
	p.nodes = p.nodes[:d+1]
}

// Restart begins a new tree (the next round of a bounded search) with
// what the sibling model learned.
func (p *Path) Restart() {
	*p = Path{restActual: p.restActual, restPred: p.restPred, restNodes: p.restNodes}
}

// State is a Path as plain data, to be stored and restored in another
// process (the store's DPOR frontier).
type State struct {
	Nodes    []NodeState
	Branches int
	Elapsed  time.Duration
	// The sibling model's evidence (Path).
	RestActual float64 `msgpack:",omitempty"`
	RestPred   float64 `msgpack:",omitempty"`
	RestNodes  int     `msgpack:",omitempty"`
}

// NodeState is one node of a State.
type NodeState struct {
	Usecs    float64
	Marked   int
	DoneN    int
	DoneProp float64
	DoneTime float64
	// The sibling model's sums (Path); a state stored without them
	// resumes with the thesis's sums.
	DonePropK float64 `msgpack:",omitempty"`
	DoneTimeK float64 `msgpack:",omitempty"`
	First     float64 `msgpack:",omitempty"`
	PredRest  float64 `msgpack:",omitempty"`
}

// State returns the path's state.
func (p *Path) State() State {
	s := State{Branches: p.branches, Elapsed: p.elapsed, Nodes: make([]NodeState, len(p.nodes)),
		RestActual: p.restActual, RestPred: p.restPred, RestNodes: p.restNodes}
	for i, n := range p.nodes {
		s.Nodes[i] = NodeState{Usecs: n.usecs, Marked: n.marked, DoneN: n.doneN, DoneProp: n.doneProp, DoneTime: n.doneTime,
			DonePropK: n.donePropK, DoneTimeK: n.doneTimeK, First: n.first, PredRest: n.predRest}
	}
	return s
}

// SetState replaces the path's state with s.
func (p *Path) SetState(s State) {
	p.branches, p.elapsed = s.Branches, s.Elapsed
	p.restActual, p.restPred, p.restNodes = s.RestActual, s.RestPred, s.RestNodes
	p.nodes = make([]node, len(s.Nodes))
	for i, n := range s.Nodes {
		p.nodes[i] = node{usecs: n.Usecs, marked: n.Marked, doneN: n.DoneN, doneProp: n.DoneProp, doneTime: n.DoneTime,
			donePropK: n.DonePropK, doneTimeK: n.DoneTimeK, first: n.First, predRest: n.PredRest}
		if n.DoneN > 0 && n.DonePropK == 0 && n.DoneTimeK == 0 { // stored before the sibling model
			p.nodes[i].donePropK, p.nodes[i].doneTimeK = n.DoneProp, n.DoneTime
		}
	}
}
