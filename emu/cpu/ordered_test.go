package cpu

import (
	"testing"

	"landslide/emu/mem"
)

// TestMarkOrdered: the RISC-V mapping of C11 atomics (ISA manual Table
// A.6) marks an acquire load (lw; fence r,rw) and a release store (fence
// rw,w; sw) as atomic with their ordering, an access followed by the
// SDK's relaxed marker (fence i,i) as a relaxed atomic, and the fences
// that belong to no access as C11 fences; plain neighbours and other
// fences stay plain.
func TestMarkOrdered(t *testing.T) {
	const (
		lw      = 0x0005a503 // lw a0, 0(a1)
		sw      = 0x00a5a023 // sw a0, 0(a1)
		addi    = 0x00150513 // addi a0, a0, 1
		fenceRR = 0x0230000f // fence r,rw
		fenceRW = 0x0310000f // fence rw,w
		fenceWW = 0x0110000f // fence w,w (no r before, no w after a load)
		fenceSC = 0x0330000f // fence rw,rw
		marker  = RelaxedMarker
		none    = Order(0)
		acq     = OrderAtomic | OrderAcquire
		rel     = OrderAtomic | OrderRelease
		relaxed = OrderAtomic
		acqF    = OrderFence | OrderAcquire
		relF    = OrderFence | OrderRelease
		scF     = OrderFence | OrderAcquire | OrderRelease
	)
	cases := []struct {
		name  string
		words []uint32
		want  []Order
	}{
		{"acquire load", []uint32{lw, fenceRR}, []Order{acq, none}},
		{"release store", []uint32{fenceRW, sw}, []Order{none, rel}},
		{"plain load and store", []uint32{lw, addi, sw}, []Order{none, none, none}},
		{"load before a fence without r", []uint32{lw, fenceWW}, []Order{none, none}},
		{"store after fence r,rw (no w after): an acquire fence", []uint32{fenceRR, sw}, []Order{acqF, none}},
		{"seq_cst load: its leading fence is part of it", []uint32{fenceSC, lw, fenceRR}, []Order{none, acq, none}},
		{"load at the end of the page", []uint32{addi, lw}, []Order{none, none}},
		{"release store after a scheduled li", []uint32{fenceRW, addi, sw}, []Order{none, none, rel}},
		{"acquire load, then an add, then the fence", []uint32{lw, addi, fenceRR}, []Order{acq, none, none}},
		{"a branch between fence and store: a release fence", []uint32{fenceRW, 0x00050463, sw}, []Order{relF, none, none}}, // beqz a0
		{"a load between fence and store", []uint32{fenceRW, lw, sw}, []Order{relF, none, none}},
		{"relaxed load", []uint32{lw, marker, addi}, []Order{relaxed, none, none}},
		{"relaxed store", []uint32{sw, marker}, []Order{relaxed, none}},
		{"the marker must follow at once", []uint32{lw, addi, marker}, []Order{none, none, none}},
		{"a seq_cst fence alone", []uint32{addi, fenceSC, addi}, []Order{none, scF, none}},
		{"fence w,w is no C11 fence", []uint32{fenceWW}, []Order{none}},
	}
	for _, c := range cases {
		insts := make([]Inst, len(c.words))
		for i, w := range c.words {
			insts[i] = Decode(w)
		}
		markOrdered(insts)
		for i := range insts {
			if insts[i].Order != c.want[i] {
				t.Errorf("%s: instruction %d (%s): order %04b, want %04b", c.name, i, insts[i].Op, insts[i].Order, c.want[i])
			}
		}
	}
}

// TestAMOOrder: the aq and rl bits of LR, SC and AMOs are their C11
// ordering (amoswap.w.aq is an acquire exchange, lr.w.aqrl/sc.w.aqrl a
// seq_cst compare-and-swap).
func TestAMOOrder(t *testing.T) {
	for _, c := range []struct {
		raw  uint32
		want Order
	}{
		{0x08b5252f, OrderAtomic},                               // amoswap.w a0, a1, (a0)
		{0x0cb5252f, OrderAtomic | OrderAcquire},                // amoswap.w.aq
		{0x0ab5252f, OrderAtomic | OrderRelease},                // amoswap.w.rl
		{0x1606a52f, OrderAtomic | OrderAcquire | OrderRelease}, // lr.w.aqrl a0, (a3)
		{0x1ee6a62f, OrderAtomic | OrderAcquire | OrderRelease}, // sc.w.aqrl a2, a4, (a3)
	} {
		if in := Decode(c.raw); in.Order != c.want {
			t.Errorf("%08x (%s): order %04b, want %04b", c.raw, in.Op, in.Order, c.want)
		}
	}
}

type recTracker struct {
	acc    []AccessFlags
	fences []AccessFlags
}

func (r *recTracker) Access(addr uint64, size uint8, f AccessFlags, pc uint64) {
	r.acc = append(r.acc, f)
}
func (r *recTracker) Fence(f AccessFlags, pc uint64) { r.fences = append(r.fences, f) }

// TestAccessChanged: a store, an SC and an AMO report whether they changed
// memory (the spin-loop rule of package kernel needs a write that stored
// what was already there to be told apart), on the fast path and across a
// page boundary.
func TestAccessChanged(t *testing.T) {
	m := mem.New()
	const code, data = 0x10000, 0x20000
	if err := m.Map(code, mem.PageSize, mem.PermR|mem.PermX); err != nil {
		t.Fatal(err)
	}
	if err := m.Map(data, 2*mem.PageSize, mem.PermR|mem.PermW); err != nil {
		t.Fatal(err)
	}
	prog := []uint32{
		0x00a5a023, // sw a0, 0(a1): 7 over 0, changed
		0x00a5a023, // sw a0, 0(a1): 7 over 7, not changed
		0x08a5a62f, // amoswap.w a2, a0, (a1): 7 over 7, not changed
		0x00a6b023, // sd a0, 0(a3): across the page boundary, changed
		0x00a6b023, // sd a0, 0(a3): the same bytes again
	}
	for i, w := range prog {
		m.Write32(code+uint64(4*i), w)
	}
	c := New(m)
	tr := &recTracker{}
	c.Tracker = tr
	c.PC = code
	c.X[10], c.X[11], c.X[13] = 7, data, data+mem.PageSize-4
	if s := c.Run(uint64(len(prog))); s.Reason != StopLimit {
		t.Fatalf("stop %v", s)
	}
	want := []AccessFlags{AccWrite | AccChanged, AccWrite, AccWrite | AccAtomic, AccWrite | AccChanged, AccWrite}
	if len(tr.acc) != len(want) {
		t.Fatalf("accesses %v, want %v", tr.acc, want)
	}
	for i := range want {
		if tr.acc[i] != want[i] {
			t.Errorf("access %d: flags %05b, want %05b", i, tr.acc[i], want[i])
		}
	}
}
