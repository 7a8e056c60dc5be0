package cpu

import "unsafe"

// Fused pairs (superinstructions).
//
// Most of an interpreted instruction's cost is its dispatch (the jump
// through exec's switch) and, on a chain of dependent instructions, the
// store of its result to the register file that the next one loads back.
// A fused pair runs two adjacent register-only instructions, the second
// reading the first's result (an add and a branch need not), in one case
// of exec's switch: one dispatch, and the intermediate value stays in a
// host register (it is still written to its guest register, which the
// program may read later).
//
// The pairs are common idioms of compiled RISC-V code (counted over the
// fixtures' binaries; see BENCHMARKS.md): a 32-bit constant (lui+addi,
// lui+addiw), zero and sign extension (slli+srli, slli+srai), a scaled
// index or a shifted operand (slli/srli then add, sub, xor, or, and), a
// bit-field extract (srli+andi), a multiply-accumulate (mul+add),
// address arithmetic (addi then add, addi), and an add and the
// conditional branch after it (a loop's counter and test).
//
// Fusion changes nothing a program or a test can see:
//   - the pair's first instruction keeps its Op; only its dispatch code
//     (Inst.fop, which exec alone reads) names the pair, and the second
//     instruction is unchanged, so a jump to the second runs it alone, and
//     step, the reference interpreter and every report see the two
//     instructions as decoded;
//   - exec runs the second half only when it lies inside the walk it is
//     in (the block, cut short by the budget): a limit or a breakpoint
//     between the two (a breakpoint ends the block before itself) leaves
//     the first to run alone, as it would unfused;
//   - the first result is written to its register before the second reads
//     its other operand from the register file, so a pair whose second
//     instruction reads that register twice (xor a0,a5,a5 after slli a5)
//     sees it as the unfused code would.
const (
	fuseLUIxADDI Op = opCount + iota
	fuseLUIxADDIW
	fuseSLLIxSRLI
	fuseSLLIxSRAI
	fuseSLLIxADD
	fuseSLLIxSUB
	fuseSLLIxXOR
	fuseSLLIxOR
	fuseSLLIxAND
	fuseSRLIxADD
	fuseSRLIxSUB
	fuseSRLIxXOR
	fuseSRLIxOR
	fuseSRLIxAND
	fuseSRLIxANDI
	fuseMULxADD
	fuseADDIxADD
	fuseADDIxADDI
	fuseADDIxBEQ
	fuseADDIxBNE
	fuseADDIxBLT
	fuseADDIxBGE
	fuseADDIxBLTU
	fuseADDIxBGEU
	fuseADDxBEQ
	fuseADDxBNE
	fuseEnd
)

// fusedWith gives the dispatch code of a followed by b: a fused pair's, or
// a.Op when they do not fuse.
func fusedWith(a, b *Inst) Op {
	if a.Rd == regDiscard {
		return a.Op
	}
	// An add followed by a conditional branch (a loop's counter and its
	// test, or the last add of a block and the branch that ends it)
	// fuses whether or not the branch reads the sum: the pair saves the
	// branch's dispatch. A branch whose offset is not a multiple of 4
	// is step's (setDispatch) and fuses with nothing.
	// b reads a's result as its first operand (b1), as one of its two
	// operands of a commutative operation (either), or as the subtrahend
	// (sub: rs1 - rs2 with rs2 = a.Rd).
	b1 := b.Rs1 == a.Rd
	either := b.Rs1 == a.Rd || b.Rs2 == a.Rd
	sub := b.Rs2 == a.Rd
	switch a.Op {
	case OpLUI:
		switch {
		case b.Op == OpADDI && b1:
			return fuseLUIxADDI
		case b.Op == OpADDIW && b1:
			return fuseLUIxADDIW
		}
	case OpSLLI:
		switch {
		case b.Op == OpSRLI && b1:
			return fuseSLLIxSRLI
		case b.Op == OpSRAI && b1:
			return fuseSLLIxSRAI
		case b.Op == OpADD && either:
			return fuseSLLIxADD
		case b.Op == OpSUB && sub:
			return fuseSLLIxSUB
		case b.Op == OpXOR && either:
			return fuseSLLIxXOR
		case b.Op == OpOR && either:
			return fuseSLLIxOR
		case b.Op == OpAND && either:
			return fuseSLLIxAND
		}
	case OpSRLI:
		switch {
		case b.Op == OpADD && either:
			return fuseSRLIxADD
		case b.Op == OpSUB && sub:
			return fuseSRLIxSUB
		case b.Op == OpXOR && either:
			return fuseSRLIxXOR
		case b.Op == OpOR && either:
			return fuseSRLIxOR
		case b.Op == OpAND && either:
			return fuseSRLIxAND
		case b.Op == OpANDI && b1:
			return fuseSRLIxANDI
		}
	case OpMUL:
		if b.Op == OpADD && either {
			return fuseMULxADD
		}
	case OpADDI:
		switch {
		case b.Op == OpADD && either:
			return fuseADDIxADD
		case b.Op == OpADDI && b1:
			return fuseADDIxADDI
		case b.Op >= OpBEQ && b.Op <= OpBGEU && b.Imm&3 == 0:
			return fuseADDIxBEQ + (b.Op - OpBEQ)
		}
	case OpADD:
		switch {
		case b.Op == OpBEQ && b.Imm&3 == 0:
			return fuseADDxBEQ
		case b.Op == OpBNE && b.Imm&3 == 0:
			return fuseADDxBNE
		}
	}
	return a.Op
}

// setDispatch sets every instruction's dispatch code: its Op, or its
// pair's when it fuses with the next instruction on the page, or
// OpIllegal (step's) for a branch whose offset is not a multiple of 4:
// taken, it raises instruction-address-misaligned, which step reports,
// so exec's branches never leave the PC misaligned (its PCs come from
// the instructions' places on the page).
func setDispatch(insts []Inst) {
	for i := range insts {
		in := &insts[i]
		in.fop = in.Op
		switch {
		case in.Op >= OpBEQ && in.Op <= OpBGEU && in.Imm&3 != 0:
			in.fop = OpIllegal
		case i+1 < len(insts):
			in.fop = fusedWith(in, &insts[i+1])
		}
	}
}

// partner is the instruction after p when it is inside the walk that ends
// at pend, or nil.
func partner(p, pend unsafe.Pointer) *Inst {
	q := unsafe.Add(p, instSize)
	if q == pend {
		return nil
	}
	return (*Inst)(q)
}

// other is the register b reads besides r, for a b that reads r as one of
// its two operands (r itself when b reads r twice).
func other(b *Inst, r uint8) uint8 { return b.Rs1 + b.Rs2 - r }
