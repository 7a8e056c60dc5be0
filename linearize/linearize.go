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
//   - a call whose first transition happens after the other's last one
//     ends before the other begins in every equivalent interleaving: it
//     must come after it (Precedes);
//   - two calls that overlap in some equivalent interleaving may come in
//     either order, as Line-Up allows for overlapping calls;
//   - two calls with no dependency either way come in either order in
//     some equivalent interleaving (one runs entirely before the other),
//     so the results must be explained with each order (none): some
//     order of the calls that gives the results puts the first before the
//     second, and some puts the second first (pair by pair, as the thesis
//     states it).
//
// Where this departs from the thesis: it orders two calls one way when
// one depends on the other and not the reverse ("one-way"), even when
// they overlap. With its "both orders" rule that flags correct
// structures (the lock-free set's case 3: a contains that depends on an
// early step of an overlapping remove was forced after it, which left no
// order for an independent pair). Ordering only calls that cannot overlap
// makes every verdict one that Line-Up gives on some equivalent
// interleaving (a violation is real), and it is still the same for
// equivalent interleavings.
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
	// Precedes[i][j]: call j's first transition happens after call i's
	// last (i returns before j begins in every equivalent interleaving).
	// It implies After[i][j].
	Precedes [][]bool
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
			switch {
			case h.Precedes[i][j]:
				must[j] = append(must[j], i)
			case !h.After[i][j] && !h.After[j][i] && i < j:
				none = append(none, [2]int{i, j})
			}
		}
	}
	// Enumerate the orders that respect must: which of them give the
	// results, and for each independent pair, whether one that does puts
	// its first call first, and one its second (the closest order that
	// does not, for the report).
	type side struct {
		ok        bool
		best      int // mismatching results of the closest order
		bestOrder []int
	}
	before := make([][2]side, len(none)) // [k][0]: none[k][0] first; [1]: second first
	some := side{best: n + 1}
	for k := range before {
		before[k][0].best, before[k][1].best = n+1, n+1
	}
	pos := make([]int, n)
	placed := make([]bool, n)
	perm := make([]int, 0, n)
	count := 0
	var tooMany bool
	note := func(s *side, miss int) {
		if s.ok {
			return
		}
		if miss == 0 {
			s.ok = true
		} else if miss < s.best {
			s.best, s.bestOrder = miss, slices.Clone(perm)
		}
	}
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
			miss := s.mismatches(h.Calls, perm)
			note(&some, miss)
			for k, p := range none {
				if pos[p[0]] < pos[p[1]] {
					note(&before[k][0], miss)
				} else {
					note(&before[k][1], miss)
				}
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
	fail := func(reason string, sd *side) (Verdict, error) {
		v := Verdict{Reason: reason}
		if sd.bestOrder != nil {
			v.Offending, v.Expected = s.offending(h.Calls, sd.bestOrder)
		}
		return v, nil
	}
	if !some.ok {
		return fail("no order of the calls that respects their dependencies gives these results", &some)
	}
	name := func(i int) string {
		c := &h.Calls[i]
		return fmt.Sprintf("thread %d's %s", c.Thread, c.String())
	}
	for k, p := range none {
		for o := 0; o < 2; o++ {
			if sd := &before[k][o]; !sd.ok {
				a, b := p[0], p[1]
				if o == 1 {
					a, b = b, a
				}
				return fail(fmt.Sprintf("no order of the calls with %s before %s gives these results, and they are independent: some equivalent interleaving runs the first entirely before the second", name(a), name(b)), sd)
			}
		}
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
