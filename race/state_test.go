package race

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestStateResume: an analyzer rebuilt from another's State halfway
// through reports exactly what the uninterrupted one reports, branch by
// branch and at the end, in both modes.
func TestStateResume(t *testing.T) {
	conflicts := 0
	for _, mode := range []Mode{Limited, Pure} {
		for seed := range uint64(40) {
			gen := func() (*rand.Rand, *Analyzer) { return rand.New(rand.NewPCG(seed, 11)), New(mode, Options{}) }
			r1, whole := gen()
			r2, first := gen()
			var a, b string
			cut := 1 + int(seed%6)
			var second *Analyzer
			for br := range 8 {
				tr1, p1 := genBranch(r1, genOpt{})
				tr2, p2 := genBranch(r2, genOpt{})
				r, c := whole.BranchAll(tr1, p1)
				for _, c := range append(r, c...) {
					a += fmt.Sprintf("%d %+v\n", br, *c)
				}
				cur := first
				if br >= cut {
					if second == nil {
						second = New(mode, Options{})
						if err := second.SetState(first.State()); err != nil {
							t.Fatal(err)
						}
					}
					cur = second
				}
				r2, c2 := cur.BranchAll(tr2, p2)
				for _, c := range append(r2, c2...) {
					b += fmt.Sprintf("%d %+v\n", br, *c)
				}
			}
			for _, c := range append(whole.Candidates(), whole.Conflicts()...) {
				a += fmt.Sprintf("end %+v\n", *c)
			}
			for _, c := range append(second.Candidates(), second.Conflicts()...) {
				b += fmt.Sprintf("end %+v\n", *c)
			}
			conflicts += len(whole.Conflicts())
			if a != b {
				t.Fatalf("%v seed %d, resumed after %d branches:\n%s\nuninterrupted:\n%s", mode, seed, cut, b, a)
			}
		}
	}
	if conflicts == 0 {
		t.Error("no atomic conflict in any branch: the resume of their state is not tested")
	}
	bad := New(Limited, Options{})
	if err := bad.SetState(State{Branches: 1, Candidates: []CandidateState{{Candidate: Candidate{Count: 1, Branch: 3}}}}); err == nil {
		t.Error("a candidate first seen after the last branch was accepted")
	}
}
