package cpu

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"landslide/emu/mem"
)

func sext32(v uint64) uint64 { return uint64(int64(int32(v))) }

// Run executes at most limit instructions and says why it stopped. On every
// stop c.PC is the address of the instruction concerned (for StopLimit, the
// next one to run) and c.Instret counts the instructions retired.
//
// Run goes a block at a time: codePage.blk says how many instructions from
// each one on run straight (no control transfer but at the last one, no
// breakpoint but on the first, all on the page), so the limit, the code
// page and the breakpoint are checked once per block; a block is cut short
// when the limit falls inside it. exec runs a block's instructions with no
// check of their own and hands back the ones it does not do itself (a
// memory access that misses the TLB or that a Tracker or Gate must see, an
// atomic, an ecall...), which step runs as the old loop did, knowing its PC
// and count from its index in the block: every stop is where, and when,
// one instruction at a time would have stopped.
func (c *CPU) Run(limit uint64) Stop {
	if c.gen != c.Mem.Gen {
		c.flush()
	}
	pc := c.PC
	// n counts the instructions retired by this Run.
	var n uint64
	skipBrk := c.resume
	c.resume = false
	// exec does loads and stores itself only when no one must see them.
	fast := c.Tracker == nil && c.Gate == nil

	// The current code page lives in locals; refill (a new page, or
	// writable code, which never caches: codeVPN = ^0) updates them.
	codeVPN, code := c.codeVPN, c.code
	for n < limit {
		if pc>>mem.PageShift != codeVPN {
			if !c.refill(pc) {
				c.PC, c.Instret = pc, c.Instret+n
				return c.pending
			}
			codeVPN, code = c.codeVPN, c.code
		}
		dn, next, st := c.exec(code, codeVPN, pc, limit-n, skipBrk, fast)
		skipBrk = false
		n, pc = n+dn, next
		switch st {
		case execBrk:
			c.PC, c.Instret = pc, c.Instret+n
			return Stop{Reason: StopBreakpoint, PC: pc}
		case execStep:
			next, st = c.step(&code.insts[(pc>>2)&(mem.PageSize/4-1)], pc, n)
			if st == execStop {
				c.PC, c.Instret = pc, c.Instret+n
				return c.pending
			}
			n++
			if st == execEcall {
				c.PC, c.Instret = pc, c.Instret+n
				return Stop{Reason: StopEcall, PC: pc}
			}
			pc = next
		}
	}
	c.PC, c.Instret = pc, c.Instret+n
	return Stop{Reason: StopLimit, PC: pc}
}

// reg is x[r] without the bounds check: r ≤ 32 by construction (Decode
// names x0..x31 and regDiscard).
func reg(x *[33]uint64, r uint8) *uint64 {
	return (*uint64)(unsafe.Add(unsafe.Pointer(x), uintptr(r)*8))
}

// instSize is the size of an Inst: exec walks blocks by pointer.
const instSize = unsafe.Sizeof(Inst{})

// pcAt is the PC of the instruction at p on the code page whose insts
// begin at base and whose first PC is vbase.
func pcAt(vbase uint64, base uintptr, p unsafe.Pointer) uint64 {
	return vbase + uint64((uintptr(p)-base)/(instSize/4))
}

// How exec and step end.
const (
	execEnd   = iota // exec: the budget ran out or the code page changes
	execBrk          // exec: next is at a breakpoint
	execStep         // exec: the instruction at next is step's; step: it ran, next is the PC after it
	execStop         // step: the instruction stopped the CPU (c.pending), not retired
	execEcall        // step: an ecall, retired
)

// exec runs instructions from pc, on the code page code (at codeVPN, which
// must hold pc), a block at a time (codePage.blk), until it has run budget
// of them or left the page (execEnd), reaches a breakpoint (execBrk; but
// not on the first instruction when skipBrk) or an instruction that step
// must run (execStep). It returns the number of instructions run and the
// PC of the next one. It calls nothing, so its hot values stay in machine
// registers. fast says that the loads and stores that hit the TLB are
// exec's to do.
func (c *CPU) exec(code *codePage, codeVPN, pc, budget uint64, skipBrk, fast bool) (n, next uint64, st int) {
	x := &c.X
	// code.vpn, not codeVPN: writable code runs from the scratch page,
	// whose codeVPN matches no PC.
	vbase, base := code.vpn<<mem.PageShift, uintptr(unsafe.Pointer(&code.insts))
	for {
		i := (pc >> 2) & (mem.PageSize/4 - 1)
		m := uint64(code.blk[i])
		if m&blkBrk != 0 {
			if !skipBrk {
				return n, pc, execBrk
			}
			m &^= blkBrk
		}
		skipBrk = false
		if budget-n < m {
			m = budget - n
		}
		// The block is insts[i:i+m], walked by pointer (p); an
		// instruction's PC comes from its place on the page (pcAt), so
		// the walk keeps only p and pend in registers. n counts the block
		// in advance: an instruction that leaves it early takes back
		// itself and those after it (left).
		p := unsafe.Pointer(&code.insts[i])
		pend := unsafe.Add(p, uintptr(m)*instSize)
		n += m
		for ; p != pend; p = unsafe.Add(p, instSize) {
			in := (*Inst)(p)
			switch in.fop {
			case OpLUI: // imm[31:12] rd 0110111
				*reg(x, in.Rd) = uint64(in.Imm)
			case OpAUIPC: // imm[31:12] rd 0010111
				*reg(x, in.Rd) = pcAt(vbase, base, p) + uint64(in.Imm)
			case OpJAL: // imm[20|10:1|11|19:12] rd 1101111
				here := pcAt(vbase, base, p)
				t := here + uint64(in.Imm)
				if t&3 != 0 {
					return n - 1, here, execStep
				}
				*reg(x, in.Rd) = here + 4
				pc = t
				goto next
			case OpJALR: // imm rs1 000 rd 1100111
				t := (*reg(x, in.Rs1) + uint64(in.Imm)) &^ 1
				here := pcAt(vbase, base, p)
				if t&3 != 0 {
					return n - 1, here, execStep
				}
				*reg(x, in.Rd) = here + 4
				pc = t
				goto next
			case OpBEQ:
				next = pcAt(vbase, base, p)
				if *reg(x, in.Rs1) == *reg(x, in.Rs2) {
					next += uint64(in.Imm)
				} else {
					next += 4
				}
				pc = next
				goto next
			case OpBNE:
				next = pcAt(vbase, base, p)
				if *reg(x, in.Rs1) != *reg(x, in.Rs2) {
					next += uint64(in.Imm)
				} else {
					next += 4
				}
				pc = next
				goto next
			case OpBLT:
				next = pcAt(vbase, base, p)
				if int64(*reg(x, in.Rs1)) < int64(*reg(x, in.Rs2)) {
					next += uint64(in.Imm)
				} else {
					next += 4
				}
				pc = next
				goto next
			case OpBGE:
				next = pcAt(vbase, base, p)
				if int64(*reg(x, in.Rs1)) >= int64(*reg(x, in.Rs2)) {
					next += uint64(in.Imm)
				} else {
					next += 4
				}
				pc = next
				goto next
			case OpBLTU:
				next = pcAt(vbase, base, p)
				if *reg(x, in.Rs1) < *reg(x, in.Rs2) {
					next += uint64(in.Imm)
				} else {
					next += 4
				}
				pc = next
				goto next
			case OpBGEU:
				next = pcAt(vbase, base, p)
				if *reg(x, in.Rs1) >= *reg(x, in.Rs2) {
					next += uint64(in.Imm)
				} else {
					next += 4
				}
				pc = next
				goto next

			// Loads and stores that hit the TLB, as c.load and c.store do.
			case OpLB:
				a := *reg(x, in.Rs1) + uint64(in.Imm)
				e := &c.rtlb[(a>>mem.PageShift)&(tlbSize-1)]
				if !fast || e.vpn != a>>mem.PageShift {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
				*reg(x, in.Rd) = uint64(int64(int8(e.page.Data[a&mem.PageMask])))
			case OpLBU:
				a := *reg(x, in.Rs1) + uint64(in.Imm)
				e := &c.rtlb[(a>>mem.PageShift)&(tlbSize-1)]
				if !fast || e.vpn != a>>mem.PageShift {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
				*reg(x, in.Rd) = uint64(e.page.Data[a&mem.PageMask])
			case OpLH, OpLHU:
				a := *reg(x, in.Rs1) + uint64(in.Imm)
				e := &c.rtlb[(a>>mem.PageShift)&(tlbSize-1)]
				off := a & mem.PageMask
				if !fast || e.vpn != a>>mem.PageShift || off > mem.PageSize-2 {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
				v := uint64(binary.LittleEndian.Uint16(e.page.Data[off:]))
				if in.Op == OpLH {
					v = uint64(int64(int16(v)))
				}
				*reg(x, in.Rd) = v
			case OpLW, OpLWU:
				a := *reg(x, in.Rs1) + uint64(in.Imm)
				e := &c.rtlb[(a>>mem.PageShift)&(tlbSize-1)]
				off := a & mem.PageMask
				if !fast || e.vpn != a>>mem.PageShift || off > mem.PageSize-4 {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
				v := uint64(binary.LittleEndian.Uint32(e.page.Data[off:]))
				if in.Op == OpLW {
					v = sext32(v)
				}
				*reg(x, in.Rd) = v
			case OpLD:
				a := *reg(x, in.Rs1) + uint64(in.Imm)
				e := &c.rtlb[(a>>mem.PageShift)&(tlbSize-1)]
				off := a & mem.PageMask
				if !fast || e.vpn != a>>mem.PageShift || off > mem.PageSize-8 {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
				*reg(x, in.Rd) = binary.LittleEndian.Uint64(e.page.Data[off:])
			case OpSB:
				a := *reg(x, in.Rs1) + uint64(in.Imm)
				e := &c.wtlb[(a>>mem.PageShift)&(tlbSize-1)]
				if !fast || e.vpn != a>>mem.PageShift {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
				e.page.Data[a&mem.PageMask] = byte(*reg(x, in.Rs2))
			case OpSH:
				a := *reg(x, in.Rs1) + uint64(in.Imm)
				e := &c.wtlb[(a>>mem.PageShift)&(tlbSize-1)]
				off := a & mem.PageMask
				if !fast || e.vpn != a>>mem.PageShift || off > mem.PageSize-2 {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
				binary.LittleEndian.PutUint16(e.page.Data[off:], uint16(*reg(x, in.Rs2)))
			case OpSW:
				a := *reg(x, in.Rs1) + uint64(in.Imm)
				e := &c.wtlb[(a>>mem.PageShift)&(tlbSize-1)]
				off := a & mem.PageMask
				if !fast || e.vpn != a>>mem.PageShift || off > mem.PageSize-4 {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
				binary.LittleEndian.PutUint32(e.page.Data[off:], uint32(*reg(x, in.Rs2)))
			case OpSD:
				a := *reg(x, in.Rs1) + uint64(in.Imm)
				e := &c.wtlb[(a>>mem.PageShift)&(tlbSize-1)]
				off := a & mem.PageMask
				if !fast || e.vpn != a>>mem.PageShift || off > mem.PageSize-8 {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
				binary.LittleEndian.PutUint64(e.page.Data[off:], *reg(x, in.Rs2))

			case OpADDI:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + uint64(in.Imm)
			case OpSLTI:
				*reg(x, in.Rd) = b2u(int64(*reg(x, in.Rs1)) < int64(in.Imm))
			case OpSLTIU:
				*reg(x, in.Rd) = b2u(*reg(x, in.Rs1) < uint64(in.Imm))
			case OpXORI:
				*reg(x, in.Rd) = *reg(x, in.Rs1) ^ uint64(in.Imm)
			case OpORI:
				*reg(x, in.Rd) = *reg(x, in.Rs1) | uint64(in.Imm)
			case OpANDI:
				*reg(x, in.Rd) = *reg(x, in.Rs1) & uint64(in.Imm)
			case OpSLLI:
				*reg(x, in.Rd) = *reg(x, in.Rs1) << (uint(in.Imm) & 63)
			case OpSRLI:
				*reg(x, in.Rd) = *reg(x, in.Rs1) >> (uint(in.Imm) & 63)
			case OpSRAI:
				*reg(x, in.Rd) = uint64(int64(*reg(x, in.Rs1)) >> (uint(in.Imm) & 63))
			case OpADD:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + *reg(x, in.Rs2)
			case OpSUB:
				*reg(x, in.Rd) = *reg(x, in.Rs1) - *reg(x, in.Rs2)
			case OpSLL:
				*reg(x, in.Rd) = *reg(x, in.Rs1) << (*reg(x, in.Rs2) & 63)
			case OpSLT:
				*reg(x, in.Rd) = b2u(int64(*reg(x, in.Rs1)) < int64(*reg(x, in.Rs2)))
			case OpSLTU:
				*reg(x, in.Rd) = b2u(*reg(x, in.Rs1) < *reg(x, in.Rs2))
			case OpXOR:
				*reg(x, in.Rd) = *reg(x, in.Rs1) ^ *reg(x, in.Rs2)
			case OpSRL:
				*reg(x, in.Rd) = *reg(x, in.Rs1) >> (*reg(x, in.Rs2) & 63)
			case OpSRA:
				*reg(x, in.Rd) = uint64(int64(*reg(x, in.Rs1)) >> (*reg(x, in.Rs2) & 63))
			case OpOR:
				*reg(x, in.Rd) = *reg(x, in.Rs1) | *reg(x, in.Rs2)
			case OpAND:
				*reg(x, in.Rd) = *reg(x, in.Rs1) & *reg(x, in.Rs2)

			case OpADDIW:
				*reg(x, in.Rd) = sext32(*reg(x, in.Rs1) + uint64(in.Imm))
			case OpSLLIW:
				*reg(x, in.Rd) = sext32(*reg(x, in.Rs1) << uint(in.Imm))
			case OpSRLIW:
				*reg(x, in.Rd) = sext32(uint64(uint32(*reg(x, in.Rs1)) >> uint(in.Imm)))
			case OpSRAIW:
				*reg(x, in.Rd) = uint64(int64(int32(*reg(x, in.Rs1)) >> uint(in.Imm)))
			case OpADDW:
				*reg(x, in.Rd) = sext32(*reg(x, in.Rs1) + *reg(x, in.Rs2))
			case OpSUBW:
				*reg(x, in.Rd) = sext32(*reg(x, in.Rs1) - *reg(x, in.Rs2))
			case OpSLLW:
				*reg(x, in.Rd) = sext32(*reg(x, in.Rs1) << (*reg(x, in.Rs2) & 31))
			case OpSRLW:
				*reg(x, in.Rd) = sext32(uint64(uint32(*reg(x, in.Rs1)) >> (*reg(x, in.Rs2) & 31)))
			case OpSRAW:
				*reg(x, in.Rd) = uint64(int64(int32(*reg(x, in.Rs1)) >> (*reg(x, in.Rs2) & 31)))

			case OpMUL:
				*reg(x, in.Rd) = *reg(x, in.Rs1) * *reg(x, in.Rs2)
			case OpMULH:
				*reg(x, in.Rd) = mulh(int64(*reg(x, in.Rs1)), int64(*reg(x, in.Rs2)))
			case OpMULHSU:
				*reg(x, in.Rd) = mulhsu(int64(*reg(x, in.Rs1)), *reg(x, in.Rs2))
			case OpMULHU:
				hi, _ := bits.Mul64(*reg(x, in.Rs1), *reg(x, in.Rs2))
				*reg(x, in.Rd) = hi
			case OpDIV:
				*reg(x, in.Rd) = uint64(div(int64(*reg(x, in.Rs1)), int64(*reg(x, in.Rs2))))
			case OpDIVU:
				if d := *reg(x, in.Rs2); d == 0 {
					*reg(x, in.Rd) = ^uint64(0)
				} else {
					*reg(x, in.Rd) = *reg(x, in.Rs1) / d
				}
			case OpREM:
				*reg(x, in.Rd) = uint64(rem(int64(*reg(x, in.Rs1)), int64(*reg(x, in.Rs2))))
			case OpREMU:
				if d := *reg(x, in.Rs2); d == 0 {
					*reg(x, in.Rd) = *reg(x, in.Rs1)
				} else {
					*reg(x, in.Rd) = *reg(x, in.Rs1) % d
				}
			case OpMULW:
				*reg(x, in.Rd) = sext32(*reg(x, in.Rs1) * *reg(x, in.Rs2))
			case OpDIVW:
				*reg(x, in.Rd) = uint64(int64(div32(int32(*reg(x, in.Rs1)), int32(*reg(x, in.Rs2)))))
			case OpDIVUW:
				if d := uint32(*reg(x, in.Rs2)); d == 0 {
					*reg(x, in.Rd) = ^uint64(0)
				} else {
					*reg(x, in.Rd) = sext32(uint64(uint32(*reg(x, in.Rs1)) / d))
				}
			case OpREMW:
				*reg(x, in.Rd) = uint64(int64(rem32(int32(*reg(x, in.Rs1)), int32(*reg(x, in.Rs2)))))
			case OpREMUW:
				if d := uint32(*reg(x, in.Rs2)); d == 0 {
					*reg(x, in.Rd) = sext32(*reg(x, in.Rs1))
				} else {
					*reg(x, in.Rd) = sext32(uint64(uint32(*reg(x, in.Rs1)) % d))
				}

			// Fused pairs (fuse.go): the first instruction's result t, then
			// the second's, when it is in this walk (partner).
			case fuseLUIxADDI:
				t := uint64(in.Imm)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t + uint64(b.Imm)
					p = unsafe.Add(p, instSize)
				}
			case fuseLUIxADDIW:
				t := uint64(in.Imm)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = sext32(t + uint64(b.Imm))
					p = unsafe.Add(p, instSize)
				}
			case fuseSLLIxSRLI:
				t := *reg(x, in.Rs1) << (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t >> (uint(b.Imm) & 63)
					p = unsafe.Add(p, instSize)
				}
			case fuseSLLIxSRAI:
				t := *reg(x, in.Rs1) << (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = uint64(int64(t) >> (uint(b.Imm) & 63))
					p = unsafe.Add(p, instSize)
				}
			case fuseSLLIxADD:
				t := *reg(x, in.Rs1) << (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t + *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseSLLIxSUB:
				t := *reg(x, in.Rs1) << (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = *reg(x, b.Rs1) - t
					p = unsafe.Add(p, instSize)
				}
			case fuseSLLIxXOR:
				t := *reg(x, in.Rs1) << (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t ^ *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseSLLIxOR:
				t := *reg(x, in.Rs1) << (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t | *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseSLLIxAND:
				t := *reg(x, in.Rs1) << (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t & *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseSRLIxADD:
				t := *reg(x, in.Rs1) >> (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t + *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseSRLIxSUB:
				t := *reg(x, in.Rs1) >> (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = *reg(x, b.Rs1) - t
					p = unsafe.Add(p, instSize)
				}
			case fuseSRLIxXOR:
				t := *reg(x, in.Rs1) >> (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t ^ *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseSRLIxOR:
				t := *reg(x, in.Rs1) >> (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t | *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseSRLIxAND:
				t := *reg(x, in.Rs1) >> (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t & *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseSRLIxANDI:
				t := *reg(x, in.Rs1) >> (uint(in.Imm) & 63)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t & uint64(b.Imm)
					p = unsafe.Add(p, instSize)
				}
			case fuseMULxADD:
				t := *reg(x, in.Rs1) * *reg(x, in.Rs2)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t + *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseADDIxADD:
				t := *reg(x, in.Rs1) + uint64(in.Imm)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t + *reg(x, other(b, in.Rd))
					p = unsafe.Add(p, instSize)
				}
			case fuseADDIxADDI:
				t := *reg(x, in.Rs1) + uint64(in.Imm)
				*reg(x, in.Rd) = t
				if b := partner(p, pend); b != nil {
					*reg(x, b.Rd) = t + uint64(b.Imm)
					p = unsafe.Add(p, instSize)
				}
			// An add, then the branch that ends the block (its result
			// written first: the branch may read it).
			case fuseADDIxBEQ:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + uint64(in.Imm)
				if b := partner(p, pend); b != nil {
					next = pcAt(vbase, base, unsafe.Add(p, instSize))
					if *reg(x, b.Rs1) == *reg(x, b.Rs2) {
						next += uint64(b.Imm)
					} else {
						next += 4
					}
					pc = next
					goto next
				}
			case fuseADDIxBNE:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + uint64(in.Imm)
				if b := partner(p, pend); b != nil {
					next = pcAt(vbase, base, unsafe.Add(p, instSize))
					if *reg(x, b.Rs1) != *reg(x, b.Rs2) {
						next += uint64(b.Imm)
					} else {
						next += 4
					}
					pc = next
					goto next
				}
			case fuseADDIxBLT:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + uint64(in.Imm)
				if b := partner(p, pend); b != nil {
					next = pcAt(vbase, base, unsafe.Add(p, instSize))
					if int64(*reg(x, b.Rs1)) < int64(*reg(x, b.Rs2)) {
						next += uint64(b.Imm)
					} else {
						next += 4
					}
					pc = next
					goto next
				}
			case fuseADDIxBGE:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + uint64(in.Imm)
				if b := partner(p, pend); b != nil {
					next = pcAt(vbase, base, unsafe.Add(p, instSize))
					if int64(*reg(x, b.Rs1)) >= int64(*reg(x, b.Rs2)) {
						next += uint64(b.Imm)
					} else {
						next += 4
					}
					pc = next
					goto next
				}
			case fuseADDIxBLTU:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + uint64(in.Imm)
				if b := partner(p, pend); b != nil {
					next = pcAt(vbase, base, unsafe.Add(p, instSize))
					if *reg(x, b.Rs1) < *reg(x, b.Rs2) {
						next += uint64(b.Imm)
					} else {
						next += 4
					}
					pc = next
					goto next
				}
			case fuseADDIxBGEU:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + uint64(in.Imm)
				if b := partner(p, pend); b != nil {
					next = pcAt(vbase, base, unsafe.Add(p, instSize))
					if *reg(x, b.Rs1) >= *reg(x, b.Rs2) {
						next += uint64(b.Imm)
					} else {
						next += 4
					}
					pc = next
					goto next
				}
			case fuseADDxBEQ:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + *reg(x, in.Rs2)
				if b := partner(p, pend); b != nil {
					next = pcAt(vbase, base, unsafe.Add(p, instSize))
					if *reg(x, b.Rs1) == *reg(x, b.Rs2) {
						next += uint64(b.Imm)
					} else {
						next += 4
					}
					pc = next
					goto next
				}
			case fuseADDxBNE:
				*reg(x, in.Rd) = *reg(x, in.Rs1) + *reg(x, in.Rs2)
				if b := partner(p, pend); b != nil {
					next = pcAt(vbase, base, unsafe.Add(p, instSize))
					if *reg(x, b.Rs1) != *reg(x, b.Rs2) {
						next += uint64(b.Imm)
					} else {
						next += 4
					}
					pc = next
					goto next
				}

			case OpFENCE:
				// Sequentially consistent, single-issue: nothing to do but
				// tell the tracker of a C11 fence (markOrdered).
				if in.Order&OrderFence != 0 && c.Tracker != nil {
					left := uint64((uintptr(pend) - uintptr(p)) / instSize)
					return n - left, pcAt(vbase, base, p), execStep
				}
			case OpFENCEI:
				// Code pages are never writable: nothing to flush.
			case OpIllegal: // (a case, not the default: no -1 before the jump table)
				left := uint64((uintptr(pend) - uintptr(p)) / instSize)
				return n - left, pcAt(vbase, base, p), execStep
			default:
				// Loads and stores that miss, atomics, counters, ecall,
				// ebreak, illegal instructions.
				left := uint64((uintptr(pend) - uintptr(p)) / instSize)
				return n - left, pcAt(vbase, base, p), execStep
			}
		}
		pc = pcAt(vbase, base, pend)
	next:
		if n >= budget || pc>>mem.PageShift != codeVPN {
			return n, pc, execEnd
		}
	}
}

// step runs the instruction in at pc, the n-th of this Run: anything
// exec hands over, as the one-at-a-time loop did. It returns the PC after
// it (execStep), or execStop with c.pending set (the instruction did not
// retire), or execEcall.
func (c *CPU) step(in *Inst, pc, n uint64) (next uint64, st int) {
	x := &c.X
	tr := c.Tracker
	gate := c.Gate
	next = pc + 4
	switch in.Op {
	case OpJAL: // imm[20|10:1|11|19:12] rd 1101111
		t := pc + uint64(in.Imm)
		if t&3 != 0 {
			c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: t}
			return 0, execStop
		}
		x[in.Rd] = next
		next = t
	case OpJALR: // imm rs1 000 rd 1100111
		t := (x[in.Rs1] + uint64(in.Imm)) &^ 1
		if t&3 != 0 {
			c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: t}
			return 0, execStop
		}
		x[in.Rd] = next
		next = t
	case OpBEQ, OpBNE, OpBLT, OpBGE, OpBLTU, OpBGEU:
		// Only a branch whose offset is not a multiple of 4 comes here
		// (setDispatch): taken, it raises instruction-address-misaligned.
		a, b := x[in.Rs1], x[in.Rs2]
		var taken bool
		switch in.Op {
		case OpBEQ:
			taken = a == b
		case OpBNE:
			taken = a != b
		case OpBLT:
			taken = int64(a) < int64(b)
		case OpBGE:
			taken = int64(a) >= int64(b)
		case OpBLTU:
			taken = a < b
		case OpBGEU:
			taken = a >= b
		}
		if taken {
			t := pc + uint64(in.Imm)
			if t&3 != 0 {
				c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: t}
				return 0, execStop
			}
			next = t
		}
	case OpLB, OpLH, OpLW, OpLD, OpLBU, OpLHU, OpLWU:
		a := x[in.Rs1] + uint64(in.Imm)
		size := loadSize[in.Op]
		// A load is no LR, whether or not it is half of a C11
		// atomic (Ordered): the Gate pairs only an LR with its SC.
		if gate != nil && !gate.Before(a, uint8(size), false, false, pc) {
			c.pending = Stop{Reason: StopGate, PC: pc}
			return 0, execStop
		}
		v, ok := c.load(a, size, pc)
		if !ok {
			return 0, execStop
		}
		switch in.Op {
		case OpLB:
			v = uint64(int64(int8(v)))
		case OpLH:
			v = uint64(int64(int16(v)))
		case OpLW:
			v = sext32(v)
		}
		if tr != nil {
			tr.Access(a, uint8(size), accFlags(in.Order), pc)
		}
		x[in.Rd] = v
	case OpSB, OpSH, OpSW, OpSD:
		a := x[in.Rs1] + uint64(in.Imm)
		size := uint64(1) << (in.Op - OpSB)
		if gate != nil && !gate.Before(a, uint8(size), true, false, pc) {
			c.pending = Stop{Reason: StopGate, PC: pc}
			return 0, execStop
		}
		changed, ok := c.store(a, size, x[in.Rs2], pc)
		if !ok {
			return 0, execStop
		}
		if tr != nil {
			f := accFlags(in.Order) | AccWrite
			if changed {
				f |= AccChanged
			}
			tr.Access(a, uint8(size), f, pc)
		}
	case OpLRW, OpLRD, OpSCW, OpSCD,
		OpAMOSWAPW, OpAMOADDW, OpAMOXORW, OpAMOANDW, OpAMOORW, OpAMOMINW, OpAMOMAXW, OpAMOMINUW, OpAMOMAXUW,
		OpAMOSWAPD, OpAMOADDD, OpAMOXORD, OpAMOANDD, OpAMOORD, OpAMOMIND, OpAMOMAXD, OpAMOMINUD, OpAMOMAXUD:
		switch c.atomic(in, pc) {
		case atomicGated:
			c.pending = Stop{Reason: StopGate, PC: pc}
			return 0, execStop
		case atomicStop:
			return 0, execStop
		}
	case OpFENCE:
		if in.Order&OrderFence != 0 && tr != nil {
			tr.Fence(accFlags(in.Order), pc)
		}
	case OpFENCEI:
	case OpCSRR:
		x[in.Rd] = c.counter(int64(in.Imm), n)
	case OpECALL:
		return next, execEcall
	case OpEBREAK:
		c.pending = Stop{Reason: StopEbreak, PC: pc}
		return 0, execStop
	default:
		// exec runs every other instruction itself.
		c.pending = Stop{Reason: StopIllegal, PC: pc, Inst: *in}
		return 0, execStop
	}
	return next, execStep
}

// atomic results.
const (
	atomicOK    = iota
	atomicStop  // c.pending says why
	atomicGated // the Gate held the access back
)

// atomic runs an LR, SC or AMO at pc.
func (c *CPU) atomic(in *Inst, pc uint64) int {
	x := &c.X
	tr := c.Tracker
	gate := c.Gate
	switch in.Op {
	case OpLRW, OpLRD:
		a := x[in.Rs1]
		size := uint64(4)
		if in.Op == OpLRD {
			size = 8
		}
		if a&(size-1) != 0 {
			c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: a, Size: uint8(size)}
			return atomicStop
		}
		if gate != nil && !gate.Before(a, uint8(size), false, true, pc) {
			return atomicGated
		}
		v, ok := c.load(a, size, pc)
		if !ok {
			return atomicStop
		}
		if size == 4 {
			v = sext32(v)
		}
		if tr != nil {
			tr.Access(a, uint8(size), accFlags(in.Order), pc)
		}
		c.resValid, c.resAddr, c.resVal = true, a, v
		x[in.Rd] = v
	case OpSCW, OpSCD:
		a := x[in.Rs1]
		size := uint64(4)
		if in.Op == OpSCD {
			size = 8
		}
		if a&(size-1) != 0 {
			c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: a, Size: uint8(size)}
			return atomicStop
		}
		if gate != nil && !gate.Before(a, uint8(size), true, true, pc) {
			return atomicGated
		}
		ok := c.resValid && c.resAddr == a
		c.resValid = false
		if ok {
			// As qemu does, the SC succeeds only if memory still holds
			// the value the LR read.
			cur, lok := c.load(a, size, pc)
			if !lok {
				return atomicStop
			}
			if size == 4 {
				cur = sext32(cur)
			}
			ok = cur == c.resVal
		}
		if ok {
			changed, sok := c.store(a, size, x[in.Rs2], pc)
			if !sok {
				return atomicStop
			}
			if tr != nil {
				f := accFlags(in.Order) | AccWrite
				if changed {
					f |= AccChanged
				}
				tr.Access(a, uint8(size), f, pc)
			}
			x[in.Rd] = 0
		} else {
			x[in.Rd] = 1
		}
	default: // the AMOs
		a := x[in.Rs1]
		size := uint64(4)
		if in.Op >= OpAMOSWAPD {
			size = 8
		}
		if a&(size-1) != 0 {
			c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: a, Size: uint8(size)}
			return atomicStop
		}
		if gate != nil && !gate.Before(a, uint8(size), true, true, pc) {
			return atomicGated
		}
		// An AMO needs write permission even to read: check the store
		// side first so a read-only page faults as a store.
		if perm, ok := c.Mem.PermAt(a); !ok || perm&mem.PermW == 0 {
			c.pending = Stop{Reason: StopFault, PC: pc, Fault: &mem.Fault{Addr: a, Write: true, Mapped: ok, Perm: perm}}
			return atomicStop
		}
		old, ok := c.load(a, size, pc)
		if !ok {
			return atomicStop
		}
		v := amo(in.Op, old, x[in.Rs2], size)
		changed, sok := c.store(a, size, v, pc)
		if !sok {
			return atomicStop
		}
		if tr != nil {
			f := accFlags(in.Order) | AccWrite
			if changed {
				f |= AccChanged
			}
			tr.Access(a, uint8(size), f, pc)
		}
		if size == 4 {
			old = sext32(old)
		}
		x[in.Rd] = old
	}
	return atomicOK
}

var loadSize = [opCount]uint64{OpLB: 1, OpLH: 2, OpLW: 4, OpLD: 8, OpLBU: 1, OpLHU: 2, OpLWU: 4}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func mulh(a, b int64) uint64 {
	hi, _ := bits.Mul64(uint64(a), uint64(b))
	// Signed correction of the unsigned high word.
	if a < 0 {
		hi -= uint64(b)
	}
	if b < 0 {
		hi -= uint64(a)
	}
	return hi
}

func mulhsu(a int64, b uint64) uint64 {
	hi, _ := bits.Mul64(uint64(a), b)
	if a < 0 {
		hi -= b
	}
	return hi
}

func div(a, b int64) int64 {
	switch {
	case b == 0:
		return -1
	case a == -1<<63 && b == -1:
		return a
	}
	return a / b
}

func rem(a, b int64) int64 {
	switch {
	case b == 0:
		return a
	case a == -1<<63 && b == -1:
		return 0
	}
	return a % b
}

func div32(a, b int32) int32 {
	switch {
	case b == 0:
		return -1
	case a == -1<<31 && b == -1:
		return a
	}
	return a / b
}

func rem32(a, b int32) int32 {
	switch {
	case b == 0:
		return a
	case a == -1<<31 && b == -1:
		return 0
	}
	return a % b
}

func amo(op Op, old, src, size uint64) uint64 {
	if size == 4 {
		old, src = sext32(old), sext32(src)
	}
	switch op {
	case OpAMOSWAPW, OpAMOSWAPD:
		return src
	case OpAMOADDW, OpAMOADDD:
		return old + src
	case OpAMOXORW, OpAMOXORD:
		return old ^ src
	case OpAMOANDW, OpAMOANDD:
		return old & src
	case OpAMOORW, OpAMOORD:
		return old | src
	case OpAMOMINW, OpAMOMIND:
		if int64(src) < int64(old) {
			return src
		}
		return old
	case OpAMOMAXW, OpAMOMAXD:
		if int64(src) > int64(old) {
			return src
		}
		return old
	case OpAMOMINUW:
		if uint32(src) < uint32(old) {
			return src
		}
		return old
	case OpAMOMAXUW:
		if uint32(src) > uint32(old) {
			return src
		}
		return old
	case OpAMOMINUD:
		if src < old {
			return src
		}
		return old
	case OpAMOMAXUD:
		if src > old {
			return src
		}
		return old
	}
	return old
}
