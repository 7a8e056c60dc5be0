package dpor

import "landslide/record"

// Full enumeration, no reduction: every runnable thread at every PP. The
// brute-force reference of the tests.
func init() {
	register("full", "no reduction: every runnable thread at every PP (brute force)", true, func(s Spec) (Strategy, error) {
		if err := onlyParams(s, "full"); err != nil {
			return nil, err
		}
		return fullStrategy{}, nil
	})
}

type fullStrategy struct{}

func (fullStrategy) Bound(r int) (int, bool)                 { return onlyRound0(r) }
func (fullStrategy) Reached(x *Explorer, i int)              { x.tagAll(i) }
func (fullStrategy) Pick(*Explorer) record.Choice            { return record.Choice{} }
func (fullStrategy) Branch(*Explorer, *Branch) error         { return nil }
func (fullStrategy) Skip(*Explorer, int, record.Choice) bool { return false }
