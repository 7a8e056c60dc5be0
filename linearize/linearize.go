// Package linearize checks that the history of an explored interleaving
// is linearizable: that some order of its calls, one at a time, gives
// the results the calls had, as Line-Up does (Burckhardt, Dern, Musuvathi
// and Tan, PLDI 2010), with the calls ordered by happens-before instead
// of real time, as in van den Hooff's CB-DPOR thesis (MIT 2014, §3.4;
// digest "cbdpor-lineup.md" §3).
//
// The sequential specification is learned, the Line-Up way: the program
// runs with its calls one at a time, in every order, and each order's
// results are recorded (Spec). A history is then checked against it:
//   - a call one of whose transitions happens after a transition of
//     another call, and not the reverse, must come after it (one-way);
//   - two calls that depend on each other both ways overlap in every
//     equivalent interleaving: either order may explain them (mutual);
//   - two calls with no dependency either way come in either order in
//     some equivalent interleaving, so the results must be explained
//     with each order (none): for every orientation of those pairs that
//     some order of the calls realises, some such order must give the
//     results.
//
// Happens-before is the same in equivalent interleavings, and so are the
// results: equivalent interleavings get the same verdict.
package linearize

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"landslide/record"
)

// Call is one call of a history.
type Call struct {
	Thread record.TID
	Index  int // among its thread's calls, from 0
	Op     string
	Arg    uint64
	Result uint64
	// Done: the call returned (Result is its result).
	Done bool
}

// ID names the call: thread and index.
func (c *Call) ID() string { return fmt.Sprintf("%d.%d", c.Thread, c.Index) }

// String is the call as a report shows it: "enqueue(1234) → 0".
func (c *Call) String() string {
	s := fmt.Sprintf("%s(%d)", c.Op, int64(c.Arg))
	if c.Done {
		s += fmt.Sprintf(" → %d", int64(c.Result))
	} else {
		s += " (never returned)"
	}
	return s
}

// History is the calls of one execution, in the order they began, and
// their dependencies.
type History struct {
	Calls []Call
	// After[i][j]: some transition of call j happens after some
	// transition of call i (i ≠ j, different threads).
	After [][]bool
}

// Spec is a sequential specification: the results of the calls in each
// order they ran one at a time.
type Spec struct {
	runs map[string][]Call // order key → the calls in that order
}

// MaxOrders bounds the orders of a history's calls that Check enumerates.
const MaxOrders = 2_000_000

// ErrSpec is a specification that cannot be used (returned by Add).
type ErrSpec struct{ Msg string }

func (e *ErrSpec) Error() string { return e.Msg }

// Add records a sequential run: its calls in the order they ran. Runs of
// the same order must agree (the specification is deterministic).
func (s *Spec) Add(calls []Call) error {
	if s.runs == nil {
		s.runs = map[string][]Call{}
	}
	for i := range calls {
		if !calls[i].Done {
			return &ErrSpec{fmt.Sprintf("thread %d's call %s never returned when the calls ran one at a time", calls[i].Thread, calls[i].String())}
		}
	}
	k := orderKey(calls, nil)
	if old, ok := s.runs[k]; ok {
		for i := range old {
			if old[i] != calls[i] {
				return &ErrSpec{fmt.Sprintf("not deterministic: with the calls one at a time in the same order (%s), thread %d's call number %d was %s in one run and %s in another: a call's result must depend only on the calls before it",
					Order(calls), calls[i].Thread, calls[i].Index+1, old[i].String(), calls[i].String())}
			}
		}
		return nil
	}
	s.runs[k] = slices.Clone(calls)
	return nil
}

// Order describes calls in order: "T2 inc(0), T3 inc(0)".
func Order(calls []Call) string {
	var parts []string
	for i := range calls {
		parts = append(parts, fmt.Sprintf("T%d %s(%d)", calls[i].Thread, calls[i].Op, int64(calls[i].Arg)))
	}
	return strings.Join(parts, ", ")
}

// Orders is the number of distinct orders recorded.
func (s *Spec) Orders() int { return len(s.runs) }

// orderKey identifies an order of calls (perm indexes calls; nil: as is).
func orderKey(calls []Call, perm []int) string {
	var b strings.Builder
	n := len(calls)
	if perm != nil {
		n = len(perm)
	}
	for i := 0; i < n; i++ {
		c := &calls[i]
		if perm != nil {
			c = &calls[perm[i]]
		}
		b.WriteString(strconv.Itoa(int(c.Thread)))
		b.WriteByte('.')
		b.WriteString(strconv.Itoa(c.Index))
		b.WriteByte(' ')
	}
	return b.String()
}

// Verdict is the result of a check.
type Verdict struct {
	OK bool
	// Reason says why the history is not linearizable, and Offending
	// names the calls whose results no explaining order gives (their
	// expected results in Expected, from the closest order).
	Reason    string
	Offending []int
	Expected  []uint64
}

// Check checks h against the specification. An error is a history that
// cannot be checked (too many orders, calls that never returned).
func (s *Spec) Check(h *History) (Verdict, error) {
	n := len(h.Calls)
	for i := range h.Calls {
		if !h.Calls[i].Done {
			c := &h.Calls[i]
			return Verdict{}, fmt.Errorf("thread %d's call %s had not returned when the execution ended", c.Thread, c.String())
		}
	}
	// must[j] lists the calls that must come before j; none are the
	// independent pairs, as (i, j) with i < j.
	must := make([][]int, n)
	var none [][2]int
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			ci, cj := &h.Calls[i], &h.Calls[j]
			if i == j {
				continue
			}
			if ci.Thread == cj.Thread {
				if ci.Index < cj.Index {
					must[j] = append(must[j], i)
				}
				continue
			}
			ij, ji := h.After[i][j], h.After[j][i]
			switch {
			case ij && !ji:
				must[j] = append(must[j], i)
			case !ij && !ji && i < j:
				none = append(none, [2]int{i, j})
			}
		}
	}
	// Enumerate the orders that respect must: for each orientation of the
	// independent pairs realised, is some order of it explained?
	type group struct {
		ok        bool
		best      int // mismatching results of the closest order
		bestOrder []int
	}
	groups := map[string]*group{}
	pos := make([]int, n)
	placed := make([]bool, n)
	perm := make([]int, 0, n)
	count := 0
	var tooMany bool
	var rec func()
	rec = func() {
		if tooMany {
			return
		}
		if len(perm) == n {
			if count++; count > MaxOrders {
				tooMany = true
				return
			}
			for k, c := range perm {
				pos[c] = k
			}
			var sig strings.Builder
			for _, p := range none {
				if pos[p[0]] < pos[p[1]] {
					sig.WriteByte('<')
				} else {
					sig.WriteByte('>')
				}
			}
			g := groups[sig.String()]
			if g == nil {
				g = &group{best: n + 1}
				groups[sig.String()] = g
			}
			if g.ok {
				return
			}
			miss := s.mismatches(h.Calls, perm)
			if miss == 0 {
				g.ok = true
			} else if miss < g.best {
				g.best, g.bestOrder = miss, slices.Clone(perm)
			}
			return
		}
		for c := 0; c < n; c++ {
			if placed[c] {
				continue
			}
			ready := true
			for _, b := range must[c] {
				if !placed[b] {
					ready = false
					break
				}
			}
			if !ready {
				continue
			}
			placed[c] = true
			perm = append(perm, c)
			rec()
			perm = perm[:len(perm)-1]
			placed[c] = false
		}
	}
	rec()
	if tooMany {
		return Verdict{}, fmt.Errorf("the history's %d calls have more than %d orders that respect their dependencies: too many to check", n, MaxOrders)
	}
	sigs := make([]string, 0, len(groups))
	for sig := range groups {
		sigs = append(sigs, sig)
	}
	slices.Sort(sigs) // the first failing orientation, in a fixed order
	for _, sig := range sigs {
		g := groups[sig]
		if g.ok {
			continue
		}
		v := Verdict{Reason: s.reason(h, none, sig)}
		if g.bestOrder != nil {
			v.Offending, v.Expected = s.offending(h.Calls, g.bestOrder)
		}
		return v, nil
	}
	return Verdict{OK: true}, nil
}

// mismatches counts the calls whose results differ from the sequential
// run of the order perm (n+1 if that order never ran, or its calls
// differ).
func (s *Spec) mismatches(calls []Call, perm []int) int {
	run, ok := s.runs[orderKey(calls, perm)]
	if !ok {
		return len(calls) + 1
	}
	miss := 0
	for k, c := range perm {
		got, want := &calls[c], &run[k]
		if got.Op != want.Op || got.Arg != want.Arg {
			return len(calls) + 1
		}
		if got.Result != want.Result {
			miss++
		}
	}
	return miss
}

// offending lists the calls whose results differ from the sequential run
// of perm, with the results that run gave.
func (s *Spec) offending(calls []Call, perm []int) ([]int, []uint64) {
	run := s.runs[orderKey(calls, perm)]
	var idx []int
	var exp []uint64
	for k, c := range perm {
		if calls[c].Result != run[k].Result {
			idx = append(idx, c)
			exp = append(exp, run[k].Result)
		}
	}
	return idx, exp
}

// reason says which orientation of the independent calls no order
// explains.
func (s *Spec) reason(h *History, none [][2]int, sig string) string {
	name := func(i int) string {
		c := &h.Calls[i]
		return fmt.Sprintf("thread %d's %s", c.Thread, c.String())
	}
	if len(none) == 0 {
		return "no order of the calls that respects their dependencies gives these results"
	}
	var parts []string
	for k, p := range none {
		a, b := p[0], p[1]
		if sig[k] == '>' {
			a, b = b, a
		}
		parts = append(parts, name(a)+" before "+name(b))
	}
	return "no order of the calls gives these results with " + strings.Join(parts, ", ") +
		" (independent calls: some equivalent interleaving runs them in this order)"
}
