package race

import "landslide/record"

// The C11 happens-before of atomics and fences, on vector clocks, for a
// sequentially consistent execution (an atomic read reads the latest
// write of each of its bytes). See the package doc for the rules.

// accessKind is what an access is to the C11 replay.
type accessKind uint8

const (
	plainRead accessKind = iota
	plainWrite
	atomicRead  // a load (LR, C11 atomic load, an RMW whose write failed)
	atomicStore // a write that is not an RMW
	atomicRMW   // an AMO or a successful SC
)

// kindOf classifies acc; prev is the access recorded just before it in
// its transition with no sync event between (nil if none). An atomic
// write is an RMW when it has acquire semantics (a store never has) or
// directly follows an atomic read of the same location and size (an LR
// and its SC, which are one event of the transition: the kernel clears
// the reservation at every switch). Any other atomic write counts as a
// store: an AMO without .aq looks exactly like one in the record, and is
// then taken for a store (which orders less, so more candidates).
func kindOf(acc, prev *record.Access) accessKind {
	switch {
	case !acc.Atomic && acc.Write:
		return plainWrite
	case !acc.Atomic:
		return plainRead
	case !acc.Write:
		return atomicRead
	case acc.Acquire || (prev != nil && prev.Atomic && !prev.Write && prev.Addr == acc.Addr && prev.Size == acc.Size):
		return atomicRMW
	}
	return atomicStore
}

func (v *vclocks) pubRow(r int32) []uint32 { return v.pubs[int(r)*v.n : (int(r)+1)*v.n] }

func (v *vclocks) pendRow(t int32) []uint32 { return v.pend[int(t)*v.n : (int(t)+1)*v.n] }

// push appends the row x ⊔ y (y may be nil) to pubs and returns its id.
func (v *vclocks) push(x, y []uint32) int32 {
	copy(v.tmp, x)
	if y != nil {
		joinInto(v.tmp, y)
	}
	r := int32(len(v.pubs) / v.n)
	v.pubs = append(v.pubs, v.tmp...)
	return r
}

// set makes the bytes [addr, addr+size) publish row r (-1: nothing).
func (v *vclocks) set(addr, size uint64, r int32) {
	for b := addr; b < addr+size; b++ {
		if r < 0 {
			delete(v.pub, b)
		} else {
			v.pub[b] = r
		}
	}
}

// readInto joins into dst the clocks published at the bytes [addr,
// addr+size) and reports whether there was any.
func (v *vclocks) readInto(dst []uint32, addr, size uint64) bool {
	if len(v.pub) == 0 {
		return false
	}
	found, last := false, int32(-1)
	for b := addr; b < addr+size; b++ {
		if r, ok := v.pub[b]; ok && r != last {
			joinInto(dst, v.pubRow(r))
			found, last = true, r
		}
	}
	return found
}

// plainWrite: a non-atomic write publishes nothing.
func (v *vclocks) plainWrite(addr, size uint64) {
	if len(v.pub) > 0 {
		v.set(addr, size, -1)
	}
}

// atomicRead by thread t: an acquire read joins what the bytes publish
// now; a relaxed one keeps it for t's next acquire fence.
func (v *vclocks) atomicRead(t int32, addr, size uint64, acquire bool) {
	if acquire {
		if v.readInto(v.row(t), addr, size) {
			v.snap[t] = -1
		}
	} else if v.readInto(v.pendRow(t), addr, size) {
		v.pendSet[t] = true
	}
}

// store by thread t (atomic, not an RMW): it heads a new release
// sequence, publishing t's clock if it is a release, else what t's
// latest release fence published (if any), else nothing.
func (v *vclocks) store(t int32, addr, size uint64, release bool) {
	if release {
		v.set(addr, size, v.push(v.row(t), nil))
		v.tick(t)
		return
	}
	v.set(addr, size, v.fence[t])
}

// rmwWrite is the write of an RMW by thread t (its read came first): it
// continues each byte's release sequence, adding t's clock if it is a
// release, and else what t's latest release fence published.
func (v *vclocks) rmwWrite(t int32, addr, size uint64, release bool) {
	f := v.fence[t]
	if !release && f < 0 {
		return // the bytes publish what they did
	}
	var base []uint32
	if release {
		base = v.row(t) // ⊒ the fence's clock
	} else {
		base = v.pubRow(f)
	}
	lastOld, lastNew := int32(-2), int32(-1)
	for b := addr; b < addr+size; b++ {
		old, ok := v.pub[b]
		if !ok {
			old = -1
		}
		if old != lastOld {
			switch {
			case old < 0 && !release:
				lastNew = f
			case old < 0:
				lastNew = v.push(base, nil)
			default:
				lastNew = v.push(v.pubRow(old), base)
				if !release {
					base = v.pubRow(f) // pubs may have moved
				}
			}
			lastOld = old
		}
		v.pub[b] = lastNew
	}
	if release {
		v.tick(t)
	}
}

// acquireFence: t joins what its relaxed reads read since its last one.
func (v *vclocks) acquireFence(t int32) {
	if !v.pendSet[t] {
		return
	}
	p := v.pendRow(t)
	joinInto(v.row(t), p)
	clear(p)
	v.pendSet[t] = false
	v.snap[t] = -1
}

// releaseFence: t's later atomic writes publish its clock as it is now.
func (v *vclocks) releaseFence(t int32) {
	v.fence[t] = v.push(v.row(t), nil)
	v.tick(t)
}
