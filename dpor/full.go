package dpor

import "landslide/record"

// Full enumeration, no reduction: every runnable thread at every PP, and
// at a thread's _xbegin every abort status the mode allows (RETRY where
// the transaction is tried, CONFLICT where it conflicts with another
// thread's earlier transition: htm.go). The brute-force reference of the
// tests.
func init() {
	register("full", "no reduction: every runnable thread at every PP (brute force)", true, func(s Spec) (Strategy, error) {
		if err := onlyParams(s, "full"); err != nil {
			return nil, err
		}
		return fullStrategy{}, nil
	})
}

type fullStrategy struct{}

func (fullStrategy) Bound(r int) (int, bool) { return onlyRound0(r) }
func (fullStrategy) Reached(x Path, i int)   { x.tagAll(i) }
func (fullStrategy) Pick(Path) record.Choice { return record.Choice{} }
func (fullStrategy) Branch(x Path, br *Branch) error {
	x.injectConflicts(br.NewPairs)
	return nil
}
func (fullStrategy) Skip(Path, int, record.Choice) bool { return false }
