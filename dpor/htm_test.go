package dpor

import (
	"strings"
	"testing"
)

// TestTMModeCombinations: the transactional-memory modes a strategy
// refuses, each with an error that names the reason, and those it takes.
func TestTMModeCombinations(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string // "" accepted
	}{
		{Spec{RetrySets: true, AbortCodes: true}, "retry sets work with RETRY aborts and DPOR only"},
		{Spec{Strategy: "icb", RetrySets: true}, "retry sets work with RETRY aborts and DPOR only"},
		{Spec{Strategy: "optimal", RetrySets: true}, "not with optimal DPOR"},
		{Spec{Strategy: "cbdpor", RetrySets: true}, "not with CB-DPOR"},
		{Spec{STM: true}, "needs distinct abort codes"},
		{Spec{AbortCodes: true, WeakAtomicity: true}, "needs STM mode"},
		{Spec{Strategy: "optimal", AbortCodes: true}, "optimal DPOR does not inject CONFLICT aborts"},
		{Spec{Strategy: "optimal", AbortCodes: true, STM: true}, "optimal DPOR does not inject CONFLICT aborts"},
		{Spec{Strategy: "cbdpor", AbortCodes: true}, "CB-DPOR does not inject CONFLICT aborts"},
		{Spec{RetrySets: true}, ""},
		{Spec{AbortCodes: true, STM: true}, ""},
		{Spec{Strategy: "full", AbortCodes: true, STM: true, WeakAtomicity: true}, ""},
		{Spec{Strategy: "icb", AbortCodes: true}, ""},
		{Spec{Strategy: "chess-atomic", AbortCodes: true}, ""},
		{Spec{Strategy: "optimal"}, ""},
		{Spec{Strategy: "cbdpor"}, ""},
	} {
		_, err := NewStrategy(c.spec)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want accepted", c.spec, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}
