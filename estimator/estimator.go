package estimator

import (
	"math"
	"time"
)

// node is one PP of the current branch.
type node struct {
	usecs  float64 // time of the transition into this node (0 at the root)
	marked int     // children explored or tagged
	// Sums over the finished children.
	doneN    int
	doneProp float64
	doneTime float64
	// The sibling model (see Path): the sums over the finished children
	// in the model, the first child's proportion in it, and the time of
	// the last finished child.
	donePropK, doneTimeK float64
	firstPropK, last     float64
}

// Estimate is the state of both estimators after a branch.
type Estimate struct {
	Branches   int     // completed branches (interleavings)
	Proportion float64 // WBE: fraction of the tree explored, 0..1
	Size       float64 // WBE: estimated number of interleavings
	Total      time.Duration
	Elapsed    time.Duration
	// The same two estimates in the sibling model (Path), for people's
	// ETA (Smoother); Quicksand reads the thesis's estimates above.
	// Kappa is the model's size of a second child relative to the
	// first, Ratio of each later child relative to the one before: 1
	// (the thesis's assumption) until enough siblings have finished to
	// learn them.
	ModelProportion float64
	ModelTotal      time.Duration
	Kappa, Ratio    float64
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
// as big as its explored ones. They are not: the first child is the one
// the search took first (under a preemption bound the one that does not
// preempt, with all the bound left; under sleep sets the one with no
// sibling asleep), and under sleep sets each later child has one more
// sibling asleep than the one before, under a bound as little of it left.
// The model takes a node's second child to be kappa times the size of its
// first and each later child ratio times the one before it (child j ≥ 1:
// kappa·ratio^(j−1)), and learns both from the siblings that finished:
// kappa from each first and second child, ratio from each later pair (a
// weighted mean of the logs of their ratios, Shrink.add). On `readers`
// (optimal DPOR) both are about 1/2 (its root's children took 10.0 s,
// 5.1 s, 2.6 s, 1.4 s, …); under a preemption bound kappa is small and
// ratio about 1 (`paraguay`: 5.9 s then 0.4 s; 3.7 s, 1.0 s, 1.1 s). A
// node with s children seen of m then stands for W(m)/W(s) times what its
// seen children took, W(n) the weight of its first n children (W(n) =
// 1 + kappa·Σ_{j<n−1} ratio^j), where the thesis's estimators take m/s
// (kappa and ratio 1): Estimate.ModelTotal and ModelProportion.
type Path struct {
	nodes    []node
	branches int
	elapsed  time.Duration
	// The sibling model's evidence: first and second children, and
	// later consecutive siblings.
	second, later Shrink
}

// Shrink is the evidence on the size of a child relative to its previous
// sibling: Σ w·log(next/previous) and Σ w over the pairs that finished,
// and how many.
type Shrink struct {
	Log, W float64
	N      int
}

// minShrinkPairs is how many pairs of finished siblings the sibling
// model needs before a factor departs from 1.
const minShrinkPairs = 16

// add takes a pair of consecutive finished siblings' times. A pair weighs
// the smaller of the two, so that a child of almost nothing (a thread
// that ends at once) before or after a big one says little.
func (s *Shrink) add(prev, next float64) {
	if prev <= 0 || next <= 0 {
		return
	}
	w := min(prev, next)
	s.Log += w * math.Log(next/prev)
	s.W += w
	s.N++
}

// factor is what s learned: 1 until minShrinkPairs pairs finished, and
// never above 1. The model shrinks the unexplored siblings (sleep sets; a
// preemption bound); it does not grow them for the tags DPOR will add,
// which a factor on the siblings already tagged predicts badly (those
// come at the nodes that have few yet; retry sets explore a thread again
// under another constraint: the runs of BENCHMARKS.md's "ETA
// calibration" that learned a factor above 1 were further off with it).
func (s Shrink) factor() float64 {
	if s.N < minShrinkPairs || s.W <= 0 {
		return 1
	}
	return min(max(math.Exp(s.Log/s.W), 1.0/64), 1)
}

// model is the sibling model's two factors.
type model struct{ kappa, ratio float64 }

func (p *Path) model() model { return model{p.second.factor(), p.later.factor()} }

// weights is W(n), the weight of a node's first n children in units of
// its first.
func (m model) weights(n int) float64 {
	switch {
	case n <= 1:
		return float64(max(n, 0))
	case m.ratio >= 1:
		return 1 + m.kappa*float64(n-1)
	}
	return 1 + m.kappa*(1-math.Pow(m.ratio, float64(n-1)))/(1-m.ratio)
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

// modelValues is values in the sibling model: the seen children stand
// for W(seen)/W(marked) of the node; the first of them weighs 1 and the
// others W(seen)−1 together.
func (n *node) modelValues(m model, childProp, childTime float64) (prop, est float64) {
	seen := n.doneN + 1
	ws, wa := m.weights(seen), m.weights(max(n.marked, seen))
	prop = childProp
	if n.doneN > 0 { // u: the mean weight of the seen children after the first
		u := (ws - 1) / float64(seen-1)
		prop = (n.firstPropK + u*(n.donePropK-n.firstPropK+childProp)) / (1 + u*float64(seen-1)) * ws
	}
	return prop / wa, n.usecs + wa/ws*(n.doneTimeK+childTime)
}

// modelLeafValues is leafValues in the sibling model.
func (p *Path) modelLeafValues(stop int) (float64, float64) {
	if len(p.nodes) == 0 {
		return 0, 0
	}
	k := p.model()
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
	m := p.model()
	e.ModelProportion, e.ModelTotal, e.Kappa, e.Ratio = mprop, time.Duration(mest), m.kappa, m.ratio
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
	// The nodes below d are finished: the sibling model learns from the
	// last child of each and the one before it.
	var childTime float64
	prop, est := p.leafValues(d+1, func(i int, _, est float64) {
		if i+1 < len(p.nodes) {
			p.learn(&p.nodes[i], childTime)
		}
		childTime = est // node i's subtree: its parent's child on the branch
	})
	mprop, mest := p.modelLeafValues(d + 1)
	n := &p.nodes[d]
	p.learn(n, est)
	if n.doneN == 0 {
		n.firstPropK = mprop
	}
	n.doneN++
	n.doneProp += prop
	n.doneTime += est
	n.donePropK += mprop
	n.doneTimeK += mest
	n.last = est
	p.nodes = p.nodes[:d+1]
}

// learn takes the time of node n's child that finished after its last.
func (p *Path) learn(n *node, t float64) {
	switch n.doneN {
	case 0:
	case 1:
		p.second.add(n.last, t)
	default:
		p.later.add(n.last, t)
	}
}

// Restart begins a new tree (the next round of a bounded search) with
// what the sibling model learned.
func (p *Path) Restart() {
	*p = Path{second: p.second, later: p.later}
}

// State is a Path as plain data, to be stored and restored in another
// process (the store's DPOR frontier).
type State struct {
	Nodes    []NodeState
	Branches int
	Elapsed  time.Duration
	// The sibling model's evidence (Path).
	Second, Later Shrink `msgpack:",omitempty"`
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
	DonePropK  float64 `msgpack:",omitempty"`
	DoneTimeK  float64 `msgpack:",omitempty"`
	FirstPropK float64 `msgpack:",omitempty"`
	Last       float64 `msgpack:",omitempty"`
}

// State returns the path's state.
func (p *Path) State() State {
	s := State{Branches: p.branches, Elapsed: p.elapsed, Nodes: make([]NodeState, len(p.nodes)),
		Second: p.second, Later: p.later}
	for i, n := range p.nodes {
		s.Nodes[i] = NodeState{Usecs: n.usecs, Marked: n.marked, DoneN: n.doneN, DoneProp: n.doneProp, DoneTime: n.doneTime,
			DonePropK: n.donePropK, DoneTimeK: n.doneTimeK, FirstPropK: n.firstPropK, Last: n.last}
	}
	return s
}

// SetState replaces the path's state with s.
func (p *Path) SetState(s State) {
	p.branches, p.elapsed = s.Branches, s.Elapsed
	p.second, p.later = s.Second, s.Later
	p.nodes = make([]node, len(s.Nodes))
	for i, n := range s.Nodes {
		p.nodes[i] = node{usecs: n.Usecs, marked: n.Marked, doneN: n.DoneN, doneProp: n.DoneProp, doneTime: n.DoneTime,
			donePropK: n.DonePropK, doneTimeK: n.DoneTimeK, firstPropK: n.FirstPropK, last: n.Last}
		if n.DoneN > 0 && n.DonePropK == 0 && n.DoneTimeK == 0 { // stored before the sibling model
			p.nodes[i].donePropK, p.nodes[i].doneTimeK = n.DoneProp, n.DoneTime
		}
	}
}
