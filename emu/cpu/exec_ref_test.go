package cpu

import (
	"math/bits"

	"landslide/emu/mem"
)

// runRef is Run as it was before the block interpreter (commit 4283c2a):
// one instruction at a time, every check on every instruction. The tests
// hold Run to it. (Since then, a taken branch to a misaligned target
// stops, as a jump does: before, the PC went on misaligned, which a
// later jump's target happened to report.)
func (c *CPU) runRef(limit uint64) Stop {
	if c.gen != c.Mem.Gen {
		c.flush()
	}
	x := &c.X
	pc := c.PC
	var n uint64
	skipBrk := c.resume
	c.resume = false
	tr := c.Tracker
	gate := c.Gate

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
		in := &code.insts[(pc>>2)&(mem.PageSize/4-1)]
		if in.Brk && !skipBrk {
			c.PC, c.Instret = pc, c.Instret+n
			return Stop{Reason: StopBreakpoint, PC: pc}
		}
		skipBrk = false
		next := pc + 4

		switch in.Op {
		case OpLUI: // imm[31:12] rd 0110111
			x[in.Rd] = uint64(in.Imm)
		case OpAUIPC: // imm[31:12] rd 0010111
			x[in.Rd] = pc + uint64(in.Imm)
		case OpJAL: // imm[20|10:1|11|19:12] rd 1101111
			t := pc + uint64(in.Imm)
			if t&3 != 0 {
				goto misalignedJump
			}
			x[in.Rd] = next
			next = t
		case OpJALR: // imm rs1 000 rd 1100111
			t := (x[in.Rs1] + uint64(in.Imm)) &^ 1
			if t&3 != 0 {
				c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: t}
				goto stop
			}
			x[in.Rd] = next
			next = t
		case OpBEQ:
			if x[in.Rs1] == x[in.Rs2] {
				next = pc + uint64(in.Imm)
				if next&3 != 0 {
					goto misalignedJump
				}
			}
		case OpBNE:
			if x[in.Rs1] != x[in.Rs2] {
				next = pc + uint64(in.Imm)
				if next&3 != 0 {
					goto misalignedJump
				}
			}
		case OpBLT:
			if int64(x[in.Rs1]) < int64(x[in.Rs2]) {
				next = pc + uint64(in.Imm)
				if next&3 != 0 {
					goto misalignedJump
				}
			}
		case OpBGE:
			if int64(x[in.Rs1]) >= int64(x[in.Rs2]) {
				next = pc + uint64(in.Imm)
				if next&3 != 0 {
					goto misalignedJump
				}
			}
		case OpBLTU:
			if x[in.Rs1] < x[in.Rs2] {
				next = pc + uint64(in.Imm)
				if next&3 != 0 {
					goto misalignedJump
				}
			}
		case OpBGEU:
			if x[in.Rs1] >= x[in.Rs2] {
				next = pc + uint64(in.Imm)
				if next&3 != 0 {
					goto misalignedJump
				}
			}

		case OpLB, OpLH, OpLW, OpLD, OpLBU, OpLHU, OpLWU:
			a := x[in.Rs1] + uint64(in.Imm)
			size := loadSize[in.Op]
			// A load is no LR, whether or not it is half of a C11
			// atomic (Ordered): the Gate pairs only an LR with its SC.
			if gate != nil && !gate.Before(a, uint8(size), false, false, pc) {
				goto gated
			}
			v, ok := c.load(a, size, pc)
			if !ok {
				goto stop
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
				goto gated
			}
			changed, ok := c.store(a, size, x[in.Rs2], pc)
			if !ok {
				goto stop
			}
			if tr != nil {
				f := accFlags(in.Order) | AccWrite
				if changed {
					f |= AccChanged
				}
				tr.Access(a, uint8(size), f, pc)
			}

		case OpADDI:
			x[in.Rd] = x[in.Rs1] + uint64(in.Imm)
		case OpSLTI:
			x[in.Rd] = b2u(int64(x[in.Rs1]) < int64(in.Imm))
		case OpSLTIU:
			x[in.Rd] = b2u(x[in.Rs1] < uint64(in.Imm))
		case OpXORI:
			x[in.Rd] = x[in.Rs1] ^ uint64(in.Imm)
		case OpORI:
			x[in.Rd] = x[in.Rs1] | uint64(in.Imm)
		case OpANDI:
			x[in.Rd] = x[in.Rs1] & uint64(in.Imm)
		case OpSLLI:
			x[in.Rd] = x[in.Rs1] << uint(in.Imm)
		case OpSRLI:
			x[in.Rd] = x[in.Rs1] >> uint(in.Imm)
		case OpSRAI:
			x[in.Rd] = uint64(int64(x[in.Rs1]) >> uint(in.Imm))
		case OpADD:
			x[in.Rd] = x[in.Rs1] + x[in.Rs2]
		case OpSUB:
			x[in.Rd] = x[in.Rs1] - x[in.Rs2]
		case OpSLL:
			x[in.Rd] = x[in.Rs1] << (x[in.Rs2] & 63)
		case OpSLT:
			x[in.Rd] = b2u(int64(x[in.Rs1]) < int64(x[in.Rs2]))
		case OpSLTU:
			x[in.Rd] = b2u(x[in.Rs1] < x[in.Rs2])
		case OpXOR:
			x[in.Rd] = x[in.Rs1] ^ x[in.Rs2]
		case OpSRL:
			x[in.Rd] = x[in.Rs1] >> (x[in.Rs2] & 63)
		case OpSRA:
			x[in.Rd] = uint64(int64(x[in.Rs1]) >> (x[in.Rs2] & 63))
		case OpOR:
			x[in.Rd] = x[in.Rs1] | x[in.Rs2]
		case OpAND:
			x[in.Rd] = x[in.Rs1] & x[in.Rs2]

		case OpADDIW:
			x[in.Rd] = sext32(x[in.Rs1] + uint64(in.Imm))
		case OpSLLIW:
			x[in.Rd] = sext32(x[in.Rs1] << uint(in.Imm))
		case OpSRLIW:
			x[in.Rd] = sext32(uint64(uint32(x[in.Rs1]) >> uint(in.Imm)))
		case OpSRAIW:
			x[in.Rd] = uint64(int64(int32(x[in.Rs1]) >> uint(in.Imm)))
		case OpADDW:
			x[in.Rd] = sext32(x[in.Rs1] + x[in.Rs2])
		case OpSUBW:
			x[in.Rd] = sext32(x[in.Rs1] - x[in.Rs2])
		case OpSLLW:
			x[in.Rd] = sext32(x[in.Rs1] << (x[in.Rs2] & 31))
		case OpSRLW:
			x[in.Rd] = sext32(uint64(uint32(x[in.Rs1]) >> (x[in.Rs2] & 31)))
		case OpSRAW:
			x[in.Rd] = uint64(int64(int32(x[in.Rs1]) >> (x[in.Rs2] & 31)))

		case OpMUL:
			x[in.Rd] = x[in.Rs1] * x[in.Rs2]
		case OpMULH:
			x[in.Rd] = mulh(int64(x[in.Rs1]), int64(x[in.Rs2]))
		case OpMULHSU:
			x[in.Rd] = mulhsu(int64(x[in.Rs1]), x[in.Rs2])
		case OpMULHU:
			hi, _ := bits.Mul64(x[in.Rs1], x[in.Rs2])
			x[in.Rd] = hi
		case OpDIV:
			x[in.Rd] = uint64(div(int64(x[in.Rs1]), int64(x[in.Rs2])))
		case OpDIVU:
			if d := x[in.Rs2]; d == 0 {
				x[in.Rd] = ^uint64(0)
			} else {
				x[in.Rd] = x[in.Rs1] / d
			}
		case OpREM:
			x[in.Rd] = uint64(rem(int64(x[in.Rs1]), int64(x[in.Rs2])))
		case OpREMU:
			if d := x[in.Rs2]; d == 0 {
				x[in.Rd] = x[in.Rs1]
			} else {
				x[in.Rd] = x[in.Rs1] % d
			}
		case OpMULW:
			x[in.Rd] = sext32(x[in.Rs1] * x[in.Rs2])
		case OpDIVW:
			x[in.Rd] = uint64(int64(div32(int32(x[in.Rs1]), int32(x[in.Rs2]))))
		case OpDIVUW:
			if d := uint32(x[in.Rs2]); d == 0 {
				x[in.Rd] = ^uint64(0)
			} else {
				x[in.Rd] = sext32(uint64(uint32(x[in.Rs1]) / d))
			}
		case OpREMW:
			x[in.Rd] = uint64(int64(rem32(int32(x[in.Rs1]), int32(x[in.Rs2]))))
		case OpREMUW:
			if d := uint32(x[in.Rs2]); d == 0 {
				x[in.Rd] = sext32(x[in.Rs1])
			} else {
				x[in.Rd] = sext32(uint64(uint32(x[in.Rs1]) % d))
			}

		case OpLRW, OpLRD:
			a := x[in.Rs1]
			size := uint64(4)
			if in.Op == OpLRD {
				size = 8
			}
			if a&(size-1) != 0 {
				c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: a, Size: uint8(size)}
				goto stop
			}
			if gate != nil && !gate.Before(a, uint8(size), false, true, pc) {
				goto gated
			}
			v, ok := c.load(a, size, pc)
			if !ok {
				goto stop
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
				goto stop
			}
			if gate != nil && !gate.Before(a, uint8(size), true, true, pc) {
				goto gated
			}
			ok := c.resValid && c.resAddr == a
			c.resValid = false
			if ok {
				// As qemu does, the SC succeeds only if memory still holds
				// the value the LR read.
				cur, lok := c.load(a, size, pc)
				if !lok {
					goto stop
				}
				if size == 4 {
					cur = sext32(cur)
				}
				ok = cur == c.resVal
			}
			if ok {
				changed, sok := c.store(a, size, x[in.Rs2], pc)
				if !sok {
					goto stop
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
		case OpAMOSWAPW, OpAMOADDW, OpAMOXORW, OpAMOANDW, OpAMOORW, OpAMOMINW, OpAMOMAXW, OpAMOMINUW, OpAMOMAXUW,
			OpAMOSWAPD, OpAMOADDD, OpAMOXORD, OpAMOANDD, OpAMOORD, OpAMOMIND, OpAMOMAXD, OpAMOMINUD, OpAMOMAXUD:
			a := x[in.Rs1]
			size := uint64(4)
			if in.Op >= OpAMOSWAPD {
				size = 8
			}
			if a&(size-1) != 0 {
				c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: a, Size: uint8(size)}
				goto stop
			}
			if gate != nil && !gate.Before(a, uint8(size), true, true, pc) {
				goto gated
			}
			// An AMO needs write permission even to read: check the store
			// side first so a read-only page faults as a store.
			if perm, ok := c.Mem.PermAt(a); !ok || perm&mem.PermW == 0 {
				c.pending = Stop{Reason: StopFault, PC: pc, Fault: &mem.Fault{Addr: a, Write: true, Mapped: ok, Perm: perm}}
				goto stop
			}
			old, ok := c.load(a, size, pc)
			if !ok {
				goto stop
			}
			v := amo(in.Op, old, x[in.Rs2], size)
			changed, sok := c.store(a, size, v, pc)
			if !sok {
				goto stop
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

		case OpFENCE:
			// Sequentially consistent, single-issue: nothing to do but
			// tell the tracker of a C11 fence (markOrdered).
			if in.Order&OrderFence != 0 && tr != nil {
				tr.Fence(accFlags(in.Order), pc)
			}
		case OpFENCEI:
			// Code pages are never writable: nothing to flush.
		case OpCSRR:
			x[in.Rd] = c.counter(int64(in.Imm), n)
		case OpECALL:
			c.PC, c.Instret = pc, c.Instret+n+1
			return Stop{Reason: StopEcall, PC: pc}
		case OpEBREAK:
			c.PC, c.Instret = pc, c.Instret+n
			return Stop{Reason: StopEbreak, PC: pc}
		default:
			c.PC, c.Instret = pc, c.Instret+n
			return Stop{Reason: StopIllegal, PC: pc, Inst: *in}
		}
		pc = next
		n++
		continue

	gated:
		c.pending = Stop{Reason: StopGate, PC: pc}
		goto stop
	misalignedJump:
		c.pending = Stop{Reason: StopMisaligned, PC: pc, Inst: *in, Addr: pc + uint64(in.Imm)}
	stop:
		c.PC, c.Instret = pc, c.Instret+n
		return c.pending
	}
	c.PC, c.Instret = pc, c.Instret+n
	return Stop{Reason: StopLimit, PC: pc}
}
