package kernel

import (
	"slices"

	"landslide/record"
)

// A thread's own stack is left out of what Access records (thesis §3.4:
// an optimisation), which is exact only while no other thread can reach
// it. Once a pointer into a stack escapes (a recorded 8-byte store of a
// value in some thread's stack, or a new thread's argument), another
// thread can access the object it points to, anywhere in the call frame
// that holds it (offsets stay within the object, the object within its
// frame), and the owner's own accesses there are dependences the
// exploration must see: a waiter reading the flag a signaller sets in
// the wait node on the waiter's stack. Those accesses go to
// Transition.Own, for the rest of the execution: after the frame
// returns, a stale pointer can still write where later frames live.
// Accesses the owner made before the pointer escaped need not: another
// thread reaches the location only through the pointer, so after the
// store that published it, which follows them in the owner's program
// order.

// maxExposed bounds a thread's exposed ranges: past it they merge into
// one that spans them all (more dependences, never fewer).
const maxExposed = 8

// expose notes that v is a value another thread can read: if it points
// into a thread's stack, the call frame it points into is shared from now
// on. A stack's lowest address is its bound, not an object (crt0 stores
// the main stack's bounds in globals): only a full stack has an object
// there.
func (k *Kernel) expose(v uint64) {
	for i, u := range k.st.threads {
		if v > u.stackLo && v < u.stackHi {
			if !u.exposedTo(v, 1) {
				lo, hi := k.frameSpan(u, v)
				u = k.own(i)
				u.exposed = addRange(u.exposed, waitRange{lo &^ 7, (hi + 7) &^ 7})
			}
			return
		}
	}
}

// frameSpan returns the call frame of thread u that holds stack address
// v, [sp, CFA); where it is not found, v up to the stack's top.
func (k *Kernel) frameSpan(u *thread, v uint64) (lo, hi uint64) {
	if _, lo, cfa, ok := k.frameAt(u, v); ok && cfa <= u.stackHi {
		return lo, cfa
	}
	return v, u.stackHi
}

// addRange returns rs (sorted, disjoint) with r added, in a new slice.
func addRange(rs []waitRange, r waitRange) []waitRange {
	out := make([]waitRange, 0, len(rs)+1)
	for _, x := range rs {
		if x.hi < r.lo || x.lo > r.hi {
			out = append(out, x)
			continue
		}
		r = waitRange{min(r.lo, x.lo), max(r.hi, x.hi)}
	}
	i := 0
	for i < len(out) && out[i].lo < r.lo {
		i++
	}
	out = slices.Insert(out, i, r)
	if len(out) > maxExposed {
		out = []waitRange{{out[0].lo, out[len(out)-1].hi}}
	}
	return out
}

// exposedTo reports whether an access of t to its own stack at
// [addr, addr+size) touches an exposed range.
func (t *thread) exposedTo(addr uint64, size uint8) bool {
	end := addr + uint64(size)
	for _, r := range t.exposed {
		if addr < r.hi && end > r.lo {
			return true
		}
	}
	return false
}

// ownAccess records t's access to its own exposed stack (Transition.Own).
// Only the last few are compared: a repeat further back costs a record,
// not a dependence (the analysis merges a transition's keys).
func (k *Kernel) ownAccess(a record.Access) {
	own := k.tr.Own
	for i := max(0, len(own)-8); i < len(own); i++ {
		if own[i] == a {
			return
		}
	}
	k.tr.Own = append(own, a)
}
