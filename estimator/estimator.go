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
}

// Estimate is the state of both estimators after a branch.
type Estimate struct {
	Branches   int     // completed branches (interleavings)
	Proportion float64 // WBE: fraction of the tree explored, 0..1
	Size       float64 // WBE: estimated number of interleavings
	Total      time.Duration
	Elapsed    time.Duration
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
type Path struct {
	nodes    []node
	branches int
	elapsed  time.Duration
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
	prop = (n.doneProp + childProp) / float64(n.marked)
	est = n.usecs + float64(n.marked)/float64(n.doneN+1)*(n.doneTime+childTime)
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
	prop, est := p.leafValues(d+1, nil)
	n := &p.nodes[d]
	n.doneN++
	n.doneProp += prop
	n.doneTime += est
	p.nodes = p.nodes[:d+1]
}

// State is a Path as plain data, to be stored and restored in another
// process (the store's DPOR frontier).
type State struct {
	Nodes    []NodeState
	Branches int
	Elapsed  time.Duration
}

// NodeState is one node of a State.
type NodeState struct {
	Usecs    float64
	Marked   int
	DoneN    int
	DoneProp float64
	DoneTime float64
}

// State returns the path's state.
func (p *Path) State() State {
	s := State{Branches: p.branches, Elapsed: p.elapsed, Nodes: make([]NodeState, len(p.nodes))}
	for i, n := range p.nodes {
		s.Nodes[i] = NodeState{Usecs: n.usecs, Marked: n.marked, DoneN: n.doneN, DoneProp: n.doneProp, DoneTime: n.doneTime}
	}
	return s
}

// SetState replaces the path's state with s.
func (p *Path) SetState(s State) {
	p.branches, p.elapsed = s.Branches, s.Elapsed
	p.nodes = make([]node, len(s.Nodes))
	for i, n := range s.Nodes {
		p.nodes[i] = node{usecs: n.Usecs, marked: n.Marked, doneN: n.DoneN, doneProp: n.DoneProp, doneTime: n.DoneTime}
	}
}
