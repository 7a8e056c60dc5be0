// Package cpu is an RV64IMA user-mode interpreter (plus the Zicsr counter
// reads, fence and fence.i) over emu/mem.
//
// The CPU knows nothing of threads or exploration: it runs one register file
// until something needs the kernel's attention and returns a Stop saying why
// (an ecall, a breakpoint, a fault, an illegal instruction, the step limit).
// The kernel swaps register files to switch threads.
//
// Speed comes from three caches, all invalidated by mem.Memory.Gen:
//   - decoded code pages, keyed by the (immutable, non-writable) page object,
//     so restoring a snapshot keeps them;
//   - a direct-mapped read TLB and write TLB of page pointers; the write TLB
//     only holds pages the memory's current epoch owns (see emu/mem M1);
//   - the current code page.
//
// Run executes a block at a time (exec.go): each decoded instruction knows
// how many run straight from it (codePage.blk: up to the next jump,
// branch, ecall or breakpoint, within the page), so the limit, the
// breakpoints and the code page are checked once per block, and exec runs
// the block without calls; what it must not do alone (an access a Tracker,
// Gate or Watcher sees, a TLB miss, an atomic, an ecall) it hands to step,
// the one-instruction path, at that instruction's exact PC and count.
// Adjacent register-only instructions of common idioms, the second
// reading the first's result, run as one fused pair (fuse.go): one
// dispatch, the intermediate value kept in a host register.
// exec_ref_test.go keeps the instruction-at-a-time loop as the reference
// the tests compare every stop, register and callback with.
//
// Pages marked mem.PermWatch (the heap) never enter the TLBs: every guest
// access to them is checked by the Watcher first.
//
// Determinism: nothing here reads the host clock or depends on map order;
// the counters (cycle, time, instret) are functions of the instruction count.
package cpu

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"landslide/emu/mem"
)

// StopReason says why Run returned.
type StopReason uint8

// Stop reasons.
const (
	StopLimit      StopReason = iota // the step limit was reached
	StopEcall                        // PC is at an ecall, already counted; the kernel advances PC
	StopEbreak                       // PC is at an ebreak
	StopBreakpoint                   // PC is at a breakpoint, not yet executed
	StopFault                        // a load, store or fetch faulted; PC at the instruction
	StopIllegal                      // illegal instruction at PC
	StopMisaligned                   // misaligned atomic, or jump to a misaligned target
	StopWatch                        // the Watcher rejected an access; PC at the instruction
	StopGate                         // the Gate held an access back; PC at the instruction, not executed
)

var stopNames = [...]string{"limit", "ecall", "ebreak", "breakpoint", "fault", "illegal", "misaligned", "watch", "gate"}

func (r StopReason) String() string {
	if int(r) < len(stopNames) {
		return stopNames[r]
	}
	return fmt.Sprintf("stop%d", r)
}

// Stop is the result of Run.
type Stop struct {
	Reason StopReason
	PC     uint64
	// Fault is set for StopFault.
	Fault *mem.Fault
	// Inst is the instruction at PC for StopIllegal and StopMisaligned.
	Inst Inst
	// Addr, Size and Write describe the access for StopWatch and
	// StopMisaligned (Addr is the jump target for a misaligned jump).
	Addr  uint64
	Size  uint8
	Write bool
}

// AccessFlags describe an access (or a fence) to the Tracker.
type AccessFlags uint8

const (
	AccWrite AccessFlags = 1 << iota
	// AccAtomic, AccAcquire and AccRelease are the instruction's Order
	// (OrderAtomic, OrderAcquire, OrderRelease).
	AccAtomic
	AccAcquire
	AccRelease
	// AccChanged: a write that changed memory (the bytes written differ
	// from those that were there).
	AccChanged
)

// accFlags turns an instruction's Order into AccessFlags.
func accFlags(o Order) AccessFlags {
	return AccessFlags(o&(OrderAtomic|OrderAcquire|OrderRelease)) << 1
}

// Tracker observes every successful guest memory access (when set), and
// the C11 fences (instructions marked OrderFence), f holding AccAcquire
// and/or AccRelease.
type Tracker interface {
	Access(addr uint64, size uint8, f AccessFlags, pc uint64)
	Fence(f AccessFlags, pc uint64)
}

// Watcher checks guest accesses to pages marked mem.PermWatch; it returns
// false to stop the CPU before the access takes effect.
type Watcher interface {
	Check(addr uint64, size uint8, write bool, pc uint64) bool
}

// Gate decides, before every load, store, LR, SC and AMO, whether it
// runs now (atomic: an LR, SC or AMO instruction; the loads and stores
// of C11 atomics are plain ones here, though the Tracker reports them as
// atomic); false stops the CPU before the instruction (StopGate), which
// runs when Run is called again and the Gate lets it through. The kernel
// uses it to make every shared access a preemption point.
type Gate interface {
	Before(addr uint64, size uint8, write, atomic bool, pc uint64) bool
}

const tlbSize = 64

type tlbEntry struct {
	vpn  uint64
	page *mem.Page
}

type codePage struct {
	vpn   uint64
	insts [mem.PageSize / 4]Inst
	// blk[i] is the length of the block that starts at instruction i: the
	// instructions Run may execute from i on without a check of the
	// limit, the breakpoints or the code page. It ends at the first
	// control transfer (included), before the next breakpoint, or at the
	// end of the page (setBlocks). blkBrk marks a breakpoint on i.
	blk [mem.PageSize / 4]uint16
}

const blkBrk = 1 << 15

// endsBlock reports whether an instruction may leave the straight line:
// a jump, a branch, an ecall or ebreak, an illegal instruction.
func (o Op) endsBlock() bool {
	switch o {
	case OpJAL, OpJALR, OpBEQ, OpBNE, OpBLT, OpBGE, OpBLTU, OpBGEU, OpECALL, OpEBREAK:
		return true
	}
	return o == OpIllegal || o >= opCount
}

// setBlocks computes cp.blk from its instructions and breakpoints.
func (cp *codePage) setBlocks() {
	next := uint16(0) // the block length at i+1
	for i := len(cp.insts) - 1; i >= 0; i-- {
		l := uint16(1)
		if !cp.insts[i].Op.endsBlock() && i+1 < len(cp.insts) && !cp.insts[i+1].Brk {
			l = next + 1
		}
		next = l
		if cp.insts[i].Brk {
			l |= blkBrk
		}
		cp.blk[i] = l
	}
}

// CPU is one RV64 hart's state plus the caches. Not safe for concurrent use.
type CPU struct {
	// X holds x0..x31; X[32] absorbs writes to x0.
	X  [33]uint64
	PC uint64
	// Instret counts every instruction retired since the machine started.
	Instret uint64

	Mem     *mem.Memory
	Tracker Tracker // nil: no access tracking
	Watcher Watcher // required if any page is PermWatch
	Gate    Gate    // nil: every access runs

	resValid bool
	resAddr  uint64
	resVal   uint64

	// resume makes the next Run execute a breakpointed instruction at PC.
	resume bool

	gen     uint64
	rtlb    [tlbSize]tlbEntry
	wtlb    [tlbSize]tlbEntry
	codeVPN uint64
	code    *codePage
	codes   map[*mem.Page]*codePage
	bps     map[uint64]bool
	scratch codePage // for executing from writable pages (no caching)

	pending Stop
}

// New returns a CPU over m with all registers zero.
func New(m *mem.Memory) *CPU {
	c := &CPU{Mem: m, codes: map[*mem.Page]*codePage{}, bps: map[uint64]bool{}}
	// Writable code runs one instruction at a time: every block is one long.
	for i := range c.scratch.blk {
		c.scratch.blk[i] = 1
	}
	c.flush()
	return c
}

func (c *CPU) flush() {
	c.gen = c.Mem.Gen
	for i := range c.rtlb {
		c.rtlb[i].vpn = ^uint64(0)
		c.wtlb[i].vpn = ^uint64(0)
	}
	c.codeVPN = ^uint64(0)
	c.code = nil
}

// ClearReservation drops any LR reservation (the kernel calls it on every
// context switch, as Linux does, so an SC after a switch fails).
func (c *CPU) ClearReservation() { c.resValid = false }

// Reserved reports whether an LR reservation is held (an SC now would
// succeed if nothing clears it first).
func (c *CPU) Reserved() bool { return c.resValid }

// ResumeFromBreakpoint makes the next Run execute the instruction at PC even
// if a breakpoint sits on it.
func (c *CPU) ResumeFromBreakpoint() { c.resume = true }

// CancelResume undoes ResumeFromBreakpoint (a restored state decides
// afresh whether the next Run starts on a breakpoint).
func (c *CPU) CancelResume() { c.resume = false }

// SetBreakpoint makes Run stop before executing the instruction at pc.
// The kernel decides what a hit means.
func (c *CPU) SetBreakpoint(pc uint64) {
	if c.bps[pc] {
		return
	}
	c.bps[pc] = true
	for _, cp := range c.codes {
		if cp.vpn == pc>>mem.PageShift {
			cp.insts[(pc&mem.PageMask)>>2].Brk = true
			cp.setBlocks()
		}
	}
}

// ClearBreakpoint removes the breakpoint at pc (a temporary one: the
// kernel's spin probe).
func (c *CPU) ClearBreakpoint(pc uint64) {
	if !c.bps[pc] {
		return
	}
	delete(c.bps, pc)
	for _, cp := range c.codes {
		if cp.vpn == pc>>mem.PageShift {
			cp.insts[(pc&mem.PageMask)>>2].Brk = false
			cp.setBlocks()
		}
	}
}

// HasBreakpoint reports whether SetBreakpoint(pc) was called.
func (c *CPU) HasBreakpoint(pc uint64) bool { return c.bps[pc] }

// Fetch decodes the instruction at pc (for reports), ignoring permissions.
func (c *CPU) Fetch(pc uint64) (Inst, bool) {
	w, ok := c.Mem.Read32(pc)
	if !ok {
		return Inst{}, false
	}
	return Decode(w), true
}

// Fence predecessor and successor bits (fence pred,succ: bits 27-24 and
// 23-20 are i, o, r, w).
const (
	fencePredR = 1 << 25
	fencePredW = 1 << 24
	fenceSuccR = 1 << 21
	fenceSuccW = 1 << 20
)

// RelaxedMarker is "fence i,i", which the SDK's stdatomic.h places right
// after the load or store of a relaxed C11 atomic (atomic_load_explicit
// and atomic_store_explicit with memory_order_relaxed): a relaxed atomic
// compiles to a plain load or store, and only the marker tells them
// apart. Compilers never emit it for C11 (device I/O is no business of
// theirs); it is a no-op on every RISC-V implementation.
const RelaxedMarker = 0x0880000f

// Order is an instruction's role in the C11 memory model, as RISC-V
// compiles the C11 atomics (the ISA manual's Table A.6).
type Order uint8

const (
	// OrderAtomic: an atomic access (LR, SC, AMO, or the load or store of
	// a C11 atomic); two atomic accesses never race.
	OrderAtomic Order = 1 << iota
	// OrderAcquire: acquire semantics (an acquire or seq_cst load, an
	// .aq atomic, an acquire fence).
	OrderAcquire
	// OrderRelease: release semantics (a release or seq_cst store, an .rl
	// atomic, a release fence).
	OrderRelease
	// OrderFence marks a fence that is not part of an atomic access's
	// mapping (a C11 atomic_thread_fence): the tracker hears of it.
	OrderFence
)

// markOrdered gives the loads, stores and fences of a decoded page their
// Order, from the RISC-V mapping of the C11 atomics (the ISA manual's
// Table A.6), with at most register-only instructions between the parts
// (compilers schedule a "li" there):
//   - "l{b,h,w,d}; fence r,rw" is an acquire (or seq_cst) load, and the
//     "fence rw,rw" before a seq_cst one belongs to it;
//   - "fence rw,w; s{b,h,w,d}" is a release (or seq_cst) store;
//   - a load or store immediately followed by RelaxedMarker is a relaxed
//     atomic;
//   - any other fence with r before and r,w after is an acquire fence,
//     with r,w before and w after a release fence (both for fence rw,rw),
//     and is marked OrderFence.
//
// Neighbours across a page boundary are not looked at. Relaxed atomics
// written without the SDK's stdatomic.h (the __atomic builtins with
// __ATOMIC_RELAXED) compile to plain loads and stores and cannot be told
// apart from them.
func markOrdered(insts []Inst) {
	absorbed := make([]bool, len(insts))
	for i := range insts {
		in := &insts[i]
		switch {
		case in.Op >= OpLB && in.Op <= OpLWU:
			if i+1 < len(insts) && insts[i+1].Raw == RelaxedMarker {
				in.Order, absorbed[i+1] = OrderAtomic, true
				continue
			}
			j := i + 1
			for j < len(insts) && insts[j].Op.registerOnly() {
				j++
			}
			if j < len(insts) && insts[j].Op == OpFENCE && insts[j].Raw&fencePredR != 0 && insts[j].Raw != RelaxedMarker {
				in.Order, absorbed[j] = OrderAtomic|OrderAcquire, true
				// A seq_cst load's leading fence rw,rw.
				k := i - 1
				for k >= 0 && insts[k].Op.registerOnly() {
					k--
				}
				if k >= 0 && insts[k].Op == OpFENCE && insts[k].Raw&(fencePredR|fencePredW|fenceSuccR|fenceSuccW) == fencePredR|fencePredW|fenceSuccR|fenceSuccW {
					absorbed[k] = true
				}
			}
		case in.Op >= OpSB && in.Op <= OpSD:
			if i+1 < len(insts) && insts[i+1].Raw == RelaxedMarker {
				in.Order, absorbed[i+1] = OrderAtomic, true
				continue
			}
			j := i - 1
			for j >= 0 && insts[j].Op.registerOnly() {
				j--
			}
			// Release: earlier writes (and reads) before this store.
			if j >= 0 && insts[j].Op == OpFENCE && insts[j].Raw&fencePredW != 0 && insts[j].Raw&fenceSuccW != 0 {
				in.Order, absorbed[j] = OrderAtomic|OrderRelease, true
			}
		}
	}
	for i := range insts {
		in := &insts[i]
		if in.Op != OpFENCE || absorbed[i] {
			continue
		}
		var o Order
		if in.Raw&fencePredR != 0 && in.Raw&(fenceSuccR|fenceSuccW) == fenceSuccR|fenceSuccW {
			o |= OrderAcquire
		}
		if in.Raw&(fencePredR|fencePredW) == fencePredR|fencePredW && in.Raw&fenceSuccW != 0 {
			o |= OrderRelease
		}
		if o != 0 {
			in.Order = o | OrderFence
		}
	}
}

// registerOnly reports whether the op only computes on registers: no
// memory access, no control transfer, no fence, no system call.
func (o Op) registerOnly() bool {
	return o == OpLUI || o == OpAUIPC || (o >= OpADDI && o <= OpREMUW)
}

// refill makes c.code the decoded page holding pc.
func (c *CPU) refill(pc uint64) bool {
	p, perm, ok := c.Mem.ReadPage(pc)
	if !ok || perm&mem.PermX == 0 {
		c.pending = Stop{Reason: StopFault, PC: pc, Fault: &mem.Fault{Addr: pc, Exec: true, Mapped: ok, Perm: perm}}
		return false
	}
	vpn := pc >> mem.PageShift
	if perm&mem.PermW != 0 {
		// Writable code: decode just this instruction, and force a refill
		// for the next one so stores are always seen.
		off := pc & mem.PageMask
		in := Decode(binary.LittleEndian.Uint32(p.Data[off:]))
		in.Brk = c.bps[pc]
		c.scratch.insts[off>>2] = in
		setDispatch(c.scratch.insts[off>>2 : off>>2+1]) // alone: it fuses with nothing
		c.scratch.vpn = vpn
		c.scratch.blk[off>>2] = 1
		if in.Brk {
			c.scratch.blk[off>>2] |= blkBrk
		}
		// codeVPN = ^0 matches no pc, so the next instruction refills.
		c.code, c.codeVPN = &c.scratch, ^uint64(0)
		return true
	}
	cp := c.codes[p]
	if cp == nil {
		cp = &codePage{vpn: vpn}
		for i := range cp.insts {
			cp.insts[i] = Decode(binary.LittleEndian.Uint32(p.Data[i*4:]))
			cp.insts[i].Brk = c.bps[vpn<<mem.PageShift|uint64(i*4)]
		}
		markOrdered(cp.insts[:])
		setDispatch(cp.insts[:])
		cp.setBlocks()
		p.Pin() // keyed by its address: never recycled as another page
		c.codes[p] = cp
	}
	c.code, c.codeVPN = cp, vpn
	return true
}

func le(b []byte, size uint64) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func putLE(b []byte, size, v uint64) {
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// load reads size bytes at addr; on failure it sets c.pending and returns
// false.
func (c *CPU) load(addr, size, pc uint64) (uint64, bool) {
	off := addr & mem.PageMask
	e := &c.rtlb[(addr>>mem.PageShift)&(tlbSize-1)]
	if e.vpn == addr>>mem.PageShift && off <= mem.PageSize-size {
		return le(e.page.Data[off:], size), true
	}
	return c.loadSlow(addr, size, pc)
}

func (c *CPU) loadSlow(addr, size, pc uint64) (uint64, bool) {
	var buf [8]byte
	for i := uint64(0); i < size; {
		a := addr + i
		p, perm, ok := c.Mem.ReadPage(a)
		if !ok || perm&mem.PermR == 0 {
			c.pending = Stop{Reason: StopFault, PC: pc, Fault: &mem.Fault{Addr: a, Mapped: ok, Perm: perm}}
			return 0, false
		}
		if perm&mem.PermWatch != 0 {
			if !c.Watcher.Check(addr, uint8(size), false, pc) {
				c.pending = Stop{Reason: StopWatch, PC: pc, Addr: addr, Size: uint8(size)}
				return 0, false
			}
		} else if i == 0 && (addr&mem.PageMask) <= mem.PageSize-size {
			c.rtlb[(a>>mem.PageShift)&(tlbSize-1)] = tlbEntry{vpn: a >> mem.PageShift, page: p}
		}
		n := uint64(copy(buf[i:size], p.Data[a&mem.PageMask:]))
		i += n
	}
	return le(buf[:], size), true
}

// store writes size bytes at addr and reports whether they differ from
// those that were there; on failure it sets c.pending, writes nothing and
// returns ok false.
func (c *CPU) store(addr, size, v, pc uint64) (changed, ok bool) {
	off := addr & mem.PageMask
	e := &c.wtlb[(addr>>mem.PageShift)&(tlbSize-1)]
	if e.vpn == addr>>mem.PageShift && off <= mem.PageSize-size {
		d := e.page.Data[off:]
		changed = le(d, size) != v&sizeMask(size)
		putLE(d, size, v)
		return changed, true
	}
	return c.storeSlow(addr, size, v, pc)
}

// sizeMask keeps the low size bytes of a value.
func sizeMask(size uint64) uint64 { return ^uint64(0) >> (64 - 8*size) }

func (c *CPU) storeSlow(addr, size, v, pc uint64) (changed, ok bool) {
	// Check every page first so a faulting store writes nothing.
	// Step by offset, not by address: addr+size may wrap around 2^64.
	watched := false
	for i := uint64(0); i < size; {
		a := addr + i
		perm, ok := c.Mem.PermAt(a)
		if !ok || perm&mem.PermW == 0 {
			c.pending = Stop{Reason: StopFault, PC: pc, Fault: &mem.Fault{Addr: a, Write: true, Mapped: ok, Perm: perm}}
			return false, false
		}
		watched = watched || perm&mem.PermWatch != 0
		i += mem.PageSize - a&mem.PageMask
	}
	if watched && !c.Watcher.Check(addr, uint8(size), true, pc) {
		c.pending = Stop{Reason: StopWatch, PC: pc, Addr: addr, Size: uint8(size), Write: true}
		return false, false
	}
	var buf [8]byte
	putLE(buf[:], size, v)
	for i := uint64(0); i < size; {
		a := addr + i
		p, _, _ := c.Mem.WritePage(a)
		if !watched && i == 0 && (addr&mem.PageMask) <= mem.PageSize-size {
			c.wtlb[(a>>mem.PageShift)&(tlbSize-1)] = tlbEntry{vpn: a >> mem.PageShift, page: p}
			// The read TLB may hold the pre-copy page: point it here too.
			c.rtlb[(a>>mem.PageShift)&(tlbSize-1)] = tlbEntry{vpn: a >> mem.PageShift, page: p}
		}
		d := p.Data[a&mem.PageMask:]
		n := uint64(min(len(d), int(size-i)))
		changed = changed || !bytes.Equal(d[:n], buf[i:i+n])
		copy(d, buf[i:size])
		i += n
	}
	return changed, true
}

// counter returns the value of a counter CSR given n instructions retired in
// the current Run.
func (c *CPU) counter(csr int64, n uint64) uint64 {
	t := c.Instret + n
	if csr == CSRTime {
		return t / 100
	}
	return t
}
