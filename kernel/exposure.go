package kernel

import "landslide/record"

// A thread's own stack is left out of what Access records (thesis §3.4:
// an optimisation), which is exact only while no other thread can reach
// it. Once a pointer into a stack escapes (a recorded 8-byte store of a
// value in some thread's stack, or a new thread's argument), another
// thread can access that location and anything above it (the pointer
// may be offset into the frames above), and the owner's own accesses
// there are dependences the exploration must see: a waiter reading the
// flag a signaller sets in the wait node on the waiter's stack. Those
// accesses go to Transition.Own. Accesses the owner made before the
// pointer escaped need not: another thread reaches the location only
// through the pointer, so after the store that published it, which
// follows them in the owner's program order.

// expose notes that v is a value another thread can read: if it points
// into a thread's stack, that thread's accesses from there up are
// shared from now on. A stack's lowest address is its bound, not an
// object (crt0 stores the main stack's bounds in globals): only a full
// stack has an object there.
func (k *Kernel) expose(v uint64) {
	for i := range k.st.threads {
		u := &k.st.threads[i]
		if v > u.stackLo && v < u.stackHi {
			if g := v &^ 7; u.exposed == 0 || g < u.exposed {
				u.exposed = g
			}
			return
		}
	}
}

// exposedTo reports whether an access of t to its own stack at addr is
// at or above t's exposed address.
func (t *thread) exposedTo(addr uint64, size uint8) bool {
	return t.exposed != 0 && addr+uint64(size) > t.exposed
}

// ownAccess records t's access to its own exposed stack (Transition.Own).
func (k *Kernel) ownAccess(a record.Access) {
	for _, x := range k.tr.Own {
		if x == a {
			return
		}
	}
	k.tr.Own = append(k.tr.Own, a)
}
