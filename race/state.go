package race

import (
	"cmp"
	"fmt"
	"slices"
)

// State is an Analyzer's accumulated knowledge as plain data, so that an
// exploration resumed in another process (from the store) classifies its
// candidates exactly as an uninterrupted one would.
type State struct {
	Branches   int
	Candidates []CandidateState
	// Conflicts are the atomic conflicts (Analyzer.Conflicts), apart: a
	// state stored before they existed has none.
	Conflicts []CandidateState `msgpack:",omitempty"`
}

// CandidateState is one candidate with its classification state.
type CandidateState struct {
	Candidate
	Last                        int
	LoFirst, HiFirst, OutsideID bool
	WasRep, WasBoth, WasRealloc bool
}

// State returns the analyzer's state, candidates and conflicts ordered
// by key.
func (a *Analyzer) State() State {
	return State{Branches: a.branches, Candidates: candStates(a.cands), Conflicts: candStates(a.conflicts)}
}

func candStates(m map[[2]uint64]*cand) []CandidateState {
	var out []CandidateState
	for _, c := range m {
		out = append(out, CandidateState{Candidate: c.Candidate, Last: c.last,
			LoFirst: c.loFirst, HiFirst: c.hiFirst, OutsideID: c.outsideInD,
			WasRep: c.wasRep, WasBoth: c.wasBoth, WasRealloc: c.wasRealloc})
	}
	slices.SortFunc(out, func(x, y CandidateState) int {
		return cmp.Or(cmp.Compare(x.A.PC, y.A.PC), cmp.Compare(x.B.PC, y.B.PC))
	})
	return out
}

// SetState replaces the analyzer's state with s (from State, possibly
// read back from a store: it is checked).
func (a *Analyzer) SetState(s State) error {
	if s.Branches < 0 {
		return fmt.Errorf("race state: %d branches", s.Branches)
	}
	cands, err := fromStates(s.Candidates, s.Branches, false)
	if err != nil {
		return err
	}
	conflicts, err := fromStates(s.Conflicts, s.Branches, true)
	if err != nil {
		return err
	}
	a.branches, a.cands, a.conflicts = s.Branches, cands, conflicts
	return nil
}

func fromStates(cs []CandidateState, branches int, conflict bool) (map[[2]uint64]*cand, error) {
	m := make(map[[2]uint64]*cand, len(cs))
	for _, c := range cs {
		if c.A.PC > c.B.PC || c.Last >= branches || c.Branch < 0 || c.Branch >= branches || c.Count < 1 || c.Conflict != conflict {
			return nil, fmt.Errorf("race state: inconsistent candidate %v", &c.Candidate)
		}
		k := c.Key()
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("race state: candidate %v twice", &c.Candidate)
		}
		m[k] = &cand{Candidate: c.Candidate, last: c.Last, loFirst: c.LoFirst, hiFirst: c.HiFirst,
			outsideInD: c.OutsideID, wasRep: c.WasRep, wasBoth: c.WasBoth, wasRealloc: c.WasRealloc}
	}
	return m, nil
}
