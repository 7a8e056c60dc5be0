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
}

// CandidateState is one candidate with its classification state.
type CandidateState struct {
	Candidate
	Last                        int
	LoFirst, HiFirst, OutsideID bool
	WasRep, WasBoth, WasRealloc bool
}

// State returns the analyzer's state, candidates ordered by key.
func (a *Analyzer) State() State {
	s := State{Branches: a.branches}
	for _, c := range a.cands {
		s.Candidates = append(s.Candidates, CandidateState{Candidate: c.Candidate, Last: c.last,
			LoFirst: c.loFirst, HiFirst: c.hiFirst, OutsideID: c.outsideInD,
			WasRep: c.wasRep, WasBoth: c.wasBoth, WasRealloc: c.wasRealloc})
	}
	slices.SortFunc(s.Candidates, func(x, y CandidateState) int {
		return cmp.Or(cmp.Compare(x.A.PC, y.A.PC), cmp.Compare(x.B.PC, y.B.PC))
	})
	return s
}

// SetState replaces the analyzer's state with s (from State, possibly
// read back from a store: it is checked).
func (a *Analyzer) SetState(s State) error {
	if s.Branches < 0 {
		return fmt.Errorf("race state: %d branches", s.Branches)
	}
	cands := make(map[[2]uint64]*cand, len(s.Candidates))
	for _, c := range s.Candidates {
		if c.A.PC > c.B.PC || c.Last >= s.Branches || c.Branch < 0 || c.Branch >= s.Branches || c.Count < 1 {
			return fmt.Errorf("race state: inconsistent candidate %v", &c.Candidate)
		}
		k := c.Key()
		if _, dup := cands[k]; dup {
			return fmt.Errorf("race state: candidate %v twice", &c.Candidate)
		}
		cands[k] = &cand{Candidate: c.Candidate, last: c.Last, loFirst: c.LoFirst, hiFirst: c.HiFirst,
			outsideInD: c.OutsideID, wasRep: c.WasRep, wasBoth: c.WasBoth, wasRealloc: c.WasRealloc}
	}
	a.branches, a.cands = s.Branches, cands
	return nil
}
