// Package linearize checks that the history of an explored interleaving
// is linearizable: that some order of its calls, one at a time, gives
// the results the calls had, as Line-Up does (Burckhardt, Dern, Musuvathi
// and Tan, PLDI 2010), in every interleaving equivalent to the explored
// one, as van den Hooff's CB-DPOR thesis asks (MIT 2014, §3.4; digest
// "cbdpor-lineup.md" §3).
//
// The sequential specification is learned, the Line-Up way: the program
// runs with its calls one at a time, in every order, and each order's
// results are recorded (Spec).
//
// Line-Up orders two calls when one returns before the other begins in
// the interleaving it checks. Equivalent interleavings differ in that
// real-time order, so the thesis orders calls by happens-before, which
// they share. Its rules: two calls each with a transition after one of
// the other's overlap in every equivalent interleaving and come in
// either order; when only one has a transition after the other's, the
// other must come first; with no dependency either way, both orders must
// give the results. Applied pair by pair, these flag correct structures:
// a one-way pair's order and an independent pair's order each occur in
// some equivalent interleaving, but need not occur in the same one (the
// lock-free set's case 3, under 9551f1b). Fc396a1 then ordered only calls
// that cannot overlap, which misses violations: an enqueue whose last
// step a dequeue's first does not follow may still return before it
// begins (the tagged FIFO's case 0).
//
// Check applies the rules per equivalent interleaving instead: a history
// is linearizable when, for each real-time order an interleaving with
// the explored one's happens-before can have, some order of the calls
// that respects it gives the results. Only the calls' first and last
// transitions matter, and it is enough to try the orders that return
// every call as early and begin it as late as happens-before allows
// (endpoints.orders): every other is contained in one of them. So a
// violation is one Line-Up finds in some equivalent interleaving (it is
// real), every such violation is found, and equivalent interleavings get
// the same verdict. TestAgainstEquivalentInterleavings checks that
// against the definition, by enumerating the interleavings.
package linearize

import (
	"encoding/binary"
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
// their dependencies. A call's first and last transitions may be one,
// but a thread's next call begins in a later transition than the one
// its previous call returned in (the kernel ends a transition at every
// lineup_return): Check takes a call's begin and end as points that
// other transitions can come between.
type History struct {
	Calls []Call
	// After[i][j]: some transition of call j happens after some
	// transition of call i (i ≠ j, different threads).
	After [][]bool
	// Precedes[i][j]: call j's first transition happens after call i's
	// last (i returns before j begins in every equivalent interleaving).
	// It implies After[i][j].
	Precedes [][]bool
	// StartsAfter[i][j]: call j's first transition happens after call
	// i's first; EndsAfter[i][j]: j's last after i's last. With After
	// and Precedes they are happens-before between the calls' ends,
	// which fixes the real-time orders the equivalent interleavings can
	// have. Nil: nothing beyond what the others imply (tests).
	StartsAfter [][]bool
	EndsAfter   [][]bool
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
	// Before are the pairs (a, b) of calls, a returning before b begins,
	// of the equivalent interleaving the reason names (none when no
	// order explains even what every equivalent interleaving has).
	Before [][2]int
}

// Revision is the revision of the check, which a stored exploration's
// verdicts depend on: one judged under an earlier revision cannot be
// continued (job's resume). 1: the thesis's rules per equivalent
// interleaving (0: calls ordered only where they cannot overlap, which
// misses violations).
const Revision = 1

// MaxCalls is the most calls a history may have (sdk's lineup.h allows
// LINEUP_MAX_CALLS, 64, per execution).
const MaxCalls = 64

// maxRealTimeStates bounds the search for the equivalent interleavings'
// real-time orders (orders), and its memory: a state's key is 8 bytes a
// call begun, some 150 MB at most with 64 calls.
const maxRealTimeStates = 1 << 18

// Check checks h against the specification. An error is a history that
// cannot be checked (too many calls or orders, calls that never
// returned, dependencies that form a cycle).
func (s *Spec) Check(h *History) (Verdict, error) {
	n := len(h.Calls)
	for i := range h.Calls {
		if !h.Calls[i].Done {
			c := &h.Calls[i]
			return Verdict{}, fmt.Errorf("thread %d's call %s had not returned when the execution ended", c.Thread, c.String())
		}
	}
	if n > MaxCalls {
		return Verdict{}, fmt.Errorf("the history has %d calls: at most %d can be checked", n, MaxCalls)
	}
	ep, err := newEndpoints(h)
	if err != nil {
		return Verdict{}, err
	}
	left := MaxOrders
	tooMany := func() (Verdict, error) {
		return Verdict{}, fmt.Errorf("the history's %d calls have more than %d orders to try against the real-time orders of its equivalent interleavings: too many to check", n, MaxOrders)
	}
	fail := func(reason string, closest []int) Verdict {
		v := Verdict{Reason: reason}
		if closest != nil {
			v.Offending, v.Expected = s.offending(h.Calls, closest)
		}
		return v
	}
	// What every equivalent interleaving orders first: if nothing
	// explains that, the message need not name an interleaving.
	forced := ep.forced()
	ok, closest := s.explain(h.Calls, forced, &left)
	switch {
	case left < 0:
		return tooMany()
	case !ok:
		return fail("no order of the calls that respects their dependencies gives these results", closest), nil
	}
	// Each equivalent interleaving's real-time order, as tight as it
	// can be.
	var bad []uint64
	var badClosest []int
	err = ep.orders(func(pred []uint64) bool {
		ok, closest := s.explain(h.Calls, pred, &left)
		if !ok && left >= 0 {
			bad, badClosest = slices.Clone(pred), closest
		}
		return ok && left >= 0
	})
	switch {
	case err != nil:
		return Verdict{}, err
	case left < 0:
		return tooMany()
	case bad != nil:
		min, closest := s.essential(h, ep.order, forced, bad, MaxOrders/4)
		if closest == nil {
			closest = badClosest
		}
		reason, before := interleavingReason(h, ep.order, forced, min)
		v := fail(reason, closest)
		v.Before = before
		return v, nil
	}
	return Verdict{OK: true}, nil
}

// essential drops from pred, the real-time order of an equivalent
// interleaving that no order of the calls explains, each pair that is
// not forced and that the violation does not need: what is left still
// has no explaining order (with at most maxOrders orders tried in all;
// a pair stays when that runs out). Every pair left holds in that
// interleaving, so the message names facts about it, and only those
// that make it a violation. Pairs are tried in order (the calls by
// thread and index). closest is nil if no pair was dropped.
func (s *Spec) essential(h *History, order []int, forced, pred []uint64, maxOrders int) (min []uint64, closest []int) {
	min = slices.Clone(pred)
	left := maxOrders
	for _, b := range order {
		for _, a := range order {
			bit := uint64(1) << a
			if min[b]&bit == 0 || forced[b]&bit != 0 || h.Calls[a].Thread == h.Calls[b].Thread {
				continue
			}
			min[b] &^= bit
			ok, c := s.explain(h.Calls, min, &left)
			if ok || left < 0 {
				min[b] |= bit
				if left < 0 {
					return min, closest
				}
				continue
			}
			closest = c
		}
	}
	return min, closest
}

// interleavingReason says which calls return before others begin in the
// equivalent interleaving whose real-time order pred nothing explains:
// the pairs that are not forced (essential's), listed in order (the
// calls by thread and index), and those pairs.
func interleavingReason(h *History, order []int, forced, pred []uint64) (string, [][2]int) {
	name := func(i int) string {
		c := &h.Calls[i]
		return fmt.Sprintf("thread %d's %s", c.Thread, c.String())
	}
	var pairs []string
	var before [][2]int
	more := 0
	for _, b := range order {
		for _, a := range order {
			if pred[b]&(1<<a) == 0 || forced[b]&(1<<a) != 0 || h.Calls[a].Thread == h.Calls[b].Thread {
				continue
			}
			before = append(before, [2]int{a, b})
			if len(pairs) == 4 {
				more++
				continue
			}
			pairs = append(pairs, fmt.Sprintf("%s returns before %s begins", name(a), name(b)))
		}
	}
	r := "no order of the calls gives these results in an equivalent interleaving where " + strings.Join(pairs, ", and ")
	if more > 0 {
		r += fmt.Sprintf(" (and %d more such pairs)", more)
	}
	return r, before
}

// explain reports whether some order of the calls in which each call
// comes after those of pred[call] (a bit per call) gives their results,
// and if not, the order that gives the fewest wrong ones (nil if no
// order ran). Each order tried costs one from *left; below 0, it gave
// up.
func (s *Spec) explain(calls []Call, pred []uint64, left *int) (ok bool, closest []int) {
	n := len(calls)
	perm := make([]int, 0, n)
	var placed uint64
	best := n + 1
	var rec func() bool
	rec = func() bool {
		if len(perm) == n {
			if *left--; *left < 0 {
				return true
			}
			miss := s.mismatches(calls, perm)
			if miss == 0 {
				ok = true
				return true
			}
			if miss < best {
				best, closest = miss, slices.Clone(perm)
			}
			return false
		}
		for c := 0; c < n; c++ {
			if placed&(1<<c) != 0 || pred[c]&^placed != 0 {
				continue
			}
			placed |= 1 << c
			perm = append(perm, c)
			stop := rec()
			perm = perm[:len(perm)-1]
			placed &^= 1 << c
			if stop {
				return true
			}
		}
		return false
	}
	rec()
	return ok, closest
}

// endpoints is happens-before between the calls' first and last
// transitions (a call's begin and end), closed transitively: needB[x]
// and needE[x] are the calls whose begin and whose end happen before
// endpoint x (begin of call c: x = 2c; end: 2c+1).
type endpoints struct {
	n            int
	order        []int // the calls by thread and index
	needB, needE []uint64
}

func newEndpoints(h *History) (*endpoints, error) {
	n := len(h.Calls)
	m := 2 * n
	hb := make([][]bool, m)
	for x := range hb {
		hb[x] = make([]bool, m)
	}
	at := func(r [][]bool, i, j int) bool { return r != nil && r[i][j] }
	for i := 0; i < n; i++ {
		hb[2*i][2*i+1] = true
		for j := 0; j < n; j++ {
			ci, cj := &h.Calls[i], &h.Calls[j]
			switch {
			case i == j:
			case ci.Thread == cj.Thread:
				if ci.Index < cj.Index {
					hb[2*i+1][2*j] = true
				}
			default:
				hb[2*i][2*j+1] = hb[2*i][2*j+1] || at(h.After, i, j)
				hb[2*i+1][2*j] = hb[2*i+1][2*j] || at(h.Precedes, i, j)
				hb[2*i][2*j] = hb[2*i][2*j] || at(h.StartsAfter, i, j)
				hb[2*i+1][2*j+1] = hb[2*i+1][2*j+1] || at(h.EndsAfter, i, j)
			}
		}
	}
	for k := 0; k < m; k++ {
		for x := 0; x < m; x++ {
			if !hb[x][k] {
				continue
			}
			for y := 0; y < m; y++ {
				if hb[k][y] {
					hb[x][y] = true
				}
			}
		}
	}
	ep := &endpoints{n: n, order: canonical(h.Calls), needB: make([]uint64, m), needE: make([]uint64, m)}
	for x := 0; x < m; x++ {
		if hb[x][x] {
			return nil, fmt.Errorf("the calls' dependencies form a cycle (through thread %d's call %s)", h.Calls[x/2].Thread, h.Calls[x/2].String())
		}
		for c := 0; c < n; c++ {
			if hb[2*c][x] {
				ep.needB[x] |= 1 << c
			}
			if hb[2*c+1][x] {
				ep.needE[x] |= 1 << c
			}
		}
	}
	return ep, nil
}

// canonical lists the calls by thread and index, so that the order they
// are listed in (the order they began) does not change which
// interleaving a report names.
func canonical(calls []Call) []int {
	idx := make([]int, len(calls))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if calls[a].Thread != calls[b].Thread {
			return int(calls[a].Thread) - int(calls[b].Thread)
		}
		return calls[a].Index - calls[b].Index
	})
	return idx
}

// forced is the real-time order every equivalent interleaving has: call
// a before call b when a's end happens before b's begin.
func (ep *endpoints) forced() []uint64 {
	pred := make([]uint64, ep.n)
	for c := range pred {
		pred[c] = ep.needE[2*c]
	}
	return pred
}

// orders calls visit with the real-time order of each equivalent
// interleaving that returns every call as early and begins it as late as
// happens-before allows (pred[c]: the calls that return before c
// begins), until visit returns false. Every
// equivalent interleaving's real-time order is contained in one of
// these: run its begins in the same order and each end as soon as its
// predecessors have run, and no call returns later relative to a begin.
// Taking the ends first loses nothing (an end enables, never disables),
// so only the choice of the next begin branches. Equal states with equal
// orders so far are searched once.
func (ep *endpoints) orders(visit func(pred []uint64) bool) error {
	all := uint64(1)<<ep.n - 1
	if ep.n == 64 {
		all = ^uint64(0)
	}
	pred := make([]uint64, ep.n)
	seen := map[string]struct{}{}
	key := make([]byte, 0, 8*(ep.n+2))
	stopped := false
	var rec func(begun, ended uint64) error
	rec = func(begun, ended uint64) error {
		for changed := true; changed; {
			changed = false
			for c := 0; c < ep.n; c++ {
				x := 2*c + 1
				if begun&(1<<c) != 0 && ended&(1<<c) == 0 && ep.needB[x]&^begun == 0 && ep.needE[x]&^ended == 0 {
					ended |= 1 << c
					changed = true
				}
			}
		}
		key = key[:0]
		key = binary.LittleEndian.AppendUint64(key, begun)
		key = binary.LittleEndian.AppendUint64(key, ended)
		for c := 0; c < ep.n; c++ {
			if begun&(1<<c) != 0 {
				key = binary.LittleEndian.AppendUint64(key, pred[c])
			}
		}
		if _, ok := seen[string(key)]; ok {
			return nil
		}
		if len(seen) >= maxRealTimeStates {
			return fmt.Errorf("the history's %d calls have more than %d partial real-time orders in their equivalent interleavings: too many to check", ep.n, maxRealTimeStates)
		}
		seen[string(key)] = struct{}{}
		if ended == all {
			if !visit(pred) {
				stopped = true
			}
			return nil
		}
		for _, c := range ep.order {
			x := 2 * c
			if begun&(1<<c) != 0 || ep.needB[x]&^begun != 0 || ep.needE[x]&^ended != 0 {
				continue
			}
			pred[c] = ended
			err := rec(begun|1<<c, ended)
			pred[c] = 0
			if err != nil || stopped {
				return err
			}
		}
		return nil
	}
	return rec(0, 0)
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
