package cpu

import "fmt"

// Op is a decoded operation. The order groups ops so the executor's switch
// compiles to a jump table.
type Op uint8

// The RV64IMA operations, plus the Zicsr counter reads and fences.
const (
	OpIllegal Op = iota
	OpLUI
	OpAUIPC
	OpJAL
	OpJALR
	OpBEQ
	OpBNE
	OpBLT
	OpBGE
	OpBLTU
	OpBGEU
	OpLB
	OpLH
	OpLW
	OpLD
	OpLBU
	OpLHU
	OpLWU
	OpSB
	OpSH
	OpSW
	OpSD
	OpADDI
	OpSLTI
	OpSLTIU
	OpXORI
	OpORI
	OpANDI
	OpSLLI
	OpSRLI
	OpSRAI
	OpADD
	OpSUB
	OpSLL
	OpSLT
	OpSLTU
	OpXOR
	OpSRL
	OpSRA
	OpOR
	OpAND
	OpADDIW
	OpSLLIW
	OpSRLIW
	OpSRAIW
	OpADDW
	OpSUBW
	OpSLLW
	OpSRLW
	OpSRAW
	OpMUL
	OpMULH
	OpMULHSU
	OpMULHU
	OpDIV
	OpDIVU
	OpREM
	OpREMU
	OpMULW
	OpDIVW
	OpDIVUW
	OpREMW
	OpREMUW
	OpLRW
	OpSCW
	OpAMOSWAPW
	OpAMOADDW
	OpAMOXORW
	OpAMOANDW
	OpAMOORW
	OpAMOMINW
	OpAMOMAXW
	OpAMOMINUW
	OpAMOMAXUW
	OpLRD
	OpSCD
	OpAMOSWAPD
	OpAMOADDD
	OpAMOXORD
	OpAMOANDD
	OpAMOORD
	OpAMOMIND
	OpAMOMAXD
	OpAMOMINUD
	OpAMOMAXUD
	OpFENCE
	OpFENCEI
	OpECALL
	OpEBREAK
	OpCSRR // csrrs/csrrc rd, counter, x0 and friends that only read a counter
	opCount
)

var opNames = [...]string{
	OpIllegal: "illegal", OpLUI: "lui", OpAUIPC: "auipc", OpJAL: "jal", OpJALR: "jalr",
	OpBEQ: "beq", OpBNE: "bne", OpBLT: "blt", OpBGE: "bge", OpBLTU: "bltu", OpBGEU: "bgeu",
	OpLB: "lb", OpLH: "lh", OpLW: "lw", OpLD: "ld", OpLBU: "lbu", OpLHU: "lhu", OpLWU: "lwu",
	OpSB: "sb", OpSH: "sh", OpSW: "sw", OpSD: "sd",
	OpADDI: "addi", OpSLTI: "slti", OpSLTIU: "sltiu", OpXORI: "xori", OpORI: "ori", OpANDI: "andi",
	OpSLLI: "slli", OpSRLI: "srli", OpSRAI: "srai",
	OpADD: "add", OpSUB: "sub", OpSLL: "sll", OpSLT: "slt", OpSLTU: "sltu", OpXOR: "xor",
	OpSRL: "srl", OpSRA: "sra", OpOR: "or", OpAND: "and",
	OpADDIW: "addiw", OpSLLIW: "slliw", OpSRLIW: "srliw", OpSRAIW: "sraiw",
	OpADDW: "addw", OpSUBW: "subw", OpSLLW: "sllw", OpSRLW: "srlw", OpSRAW: "sraw",
	OpMUL: "mul", OpMULH: "mulh", OpMULHSU: "mulhsu", OpMULHU: "mulhu",
	OpDIV: "div", OpDIVU: "divu", OpREM: "rem", OpREMU: "remu",
	OpMULW: "mulw", OpDIVW: "divw", OpDIVUW: "divuw", OpREMW: "remw", OpREMUW: "remuw",
	OpLRW: "lr.w", OpSCW: "sc.w", OpAMOSWAPW: "amoswap.w", OpAMOADDW: "amoadd.w",
	OpAMOXORW: "amoxor.w", OpAMOANDW: "amoand.w", OpAMOORW: "amoor.w", OpAMOMINW: "amomin.w",
	OpAMOMAXW: "amomax.w", OpAMOMINUW: "amominu.w", OpAMOMAXUW: "amomaxu.w",
	OpLRD: "lr.d", OpSCD: "sc.d", OpAMOSWAPD: "amoswap.d", OpAMOADDD: "amoadd.d",
	OpAMOXORD: "amoxor.d", OpAMOANDD: "amoand.d", OpAMOORD: "amoor.d", OpAMOMIND: "amomin.d",
	OpAMOMAXD: "amomax.d", OpAMOMINUD: "amominu.d", OpAMOMAXUD: "amomaxu.d",
	OpFENCE: "fence", OpFENCEI: "fence.i", OpECALL: "ecall", OpEBREAK: "ebreak", OpCSRR: "csrr",
}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("op%d", o)
}

// IsMemory reports whether the op accesses data memory.
func (o Op) IsMemory() bool { return o >= OpLB && o <= OpSD || o.IsAtomic() }

// IsAtomic reports whether the op is an LR, SC or AMO.
func (o Op) IsAtomic() bool { return o >= OpLRW && o <= OpAMOMAXUD }

// Register indices. Writes to x0 are redirected to regDiscard so that x0
// always reads as zero without a check on every instruction.
const regDiscard = 32

// Counter CSR numbers (Zicntr).
const (
	CSRCycle   = 0xC00
	CSRTime    = 0xC01
	CSRInstret = 0xC02
)

// Inst is a decoded instruction.
type Inst struct {
	Op  Op
	Rd  uint8 // destination; 32 (discard) when the encoding names x0
	Rs1 uint8
	Rs2 uint8
	// Brk is set when a breakpoint sits on this instruction (see CPU.SetBreakpoint).
	Brk bool
	// Order says what the instruction is in the C11 memory model
	// (markOrdered for loads, stores and fences; the aq and rl bits for
	// LR, SC and AMOs): OrderAtomic, OrderAcquire, OrderRelease, and for
	// a fence OrderFence when the tracker is told of it.
	Order Order
	// fop is what exec dispatches on: Op, or a fused pair's code (fuse.go).
	// Only decoded code pages set it (setDispatch); Decode leaves it zero.
	fop Op
	// Imm is the sign-extended immediate (every RV64 immediate fits in 32
	// bits; keeping Inst at 16 bytes keeps decoded pages cache-friendly).
	Imm int32
	Raw uint32
}

func signExtend(v uint32, bits uint) int32 {
	shift := 32 - bits
	return int32(v<<shift) >> shift
}

// Decode decodes one 32-bit instruction. It never fails: unknown and
// reserved encodings decode to OpIllegal (which traps when executed).
func Decode(raw uint32) Inst {
	in := Inst{Raw: raw}
	opcode := raw & 0x7f
	rd := uint8(raw >> 7 & 31)
	f3 := raw >> 12 & 7
	rs1 := uint8(raw >> 15 & 31)
	rs2 := uint8(raw >> 20 & 31)
	f7 := raw >> 25
	in.Rs1, in.Rs2 = rs1, rs2
	in.Rd = rd
	if rd == 0 {
		in.Rd = regDiscard
	}
	immI := signExtend(raw>>20, 12)
	immS := signExtend(raw>>25<<5|raw>>7&31, 12)
	immB := signExtend((raw>>31&1)<<12|(raw>>7&1)<<11|(raw>>25&0x3f)<<5|(raw>>8&0xf)<<1, 13)
	immU := int32(raw & 0xfffff000)
	immJ := signExtend((raw>>31&1)<<20|(raw>>12&0xff)<<12|(raw>>20&1)<<11|(raw>>21&0x3ff)<<1, 21)
	ill := Inst{Op: OpIllegal, Raw: raw}

	switch opcode {
	case 0x37: // LUI: imm[31:12] rd 0110111
		in.Op, in.Imm = OpLUI, immU
	case 0x17: // AUIPC: imm[31:12] rd 0010111
		in.Op, in.Imm = OpAUIPC, immU
	case 0x6f: // JAL: imm[20|10:1|11|19:12] rd 1101111
		in.Op, in.Imm = OpJAL, immJ
	case 0x67: // JALR: imm[11:0] rs1 000 rd 1100111
		if f3 != 0 {
			return ill
		}
		in.Op, in.Imm = OpJALR, immI
	case 0x63: // BRANCH: imm rs2 rs1 funct3 imm 1100011
		ops := [8]Op{OpBEQ, OpBNE, OpIllegal, OpIllegal, OpBLT, OpBGE, OpBLTU, OpBGEU}
		if in.Op = ops[f3]; in.Op == OpIllegal {
			return ill
		}
		in.Imm = immB
	case 0x03: // LOAD: imm[11:0] rs1 funct3 rd 0000011
		ops := [8]Op{OpLB, OpLH, OpLW, OpLD, OpLBU, OpLHU, OpLWU, OpIllegal}
		if in.Op = ops[f3]; in.Op == OpIllegal {
			return ill
		}
		in.Imm = immI
	case 0x23: // STORE: imm[11:5] rs2 rs1 funct3 imm[4:0] 0100011
		ops := [8]Op{OpSB, OpSH, OpSW, OpSD, OpIllegal, OpIllegal, OpIllegal, OpIllegal}
		if in.Op = ops[f3]; in.Op == OpIllegal {
			return ill
		}
		in.Imm = immS
	case 0x13: // OP-IMM: imm[11:0] rs1 funct3 rd 0010011
		in.Imm = immI
		switch f3 {
		case 0:
			in.Op = OpADDI
		case 2:
			in.Op = OpSLTI
		case 3:
			in.Op = OpSLTIU
		case 4:
			in.Op = OpXORI
		case 6:
			in.Op = OpORI
		case 7:
			in.Op = OpANDI
		case 1: // slli: 000000 shamt[5:0]
			if raw>>26 != 0 {
				return ill
			}
			in.Op, in.Imm = OpSLLI, int32(raw>>20&63)
		case 5: // srli 000000 / srai 010000, shamt[5:0]
			switch raw >> 26 {
			case 0:
				in.Op = OpSRLI
			case 0x10:
				in.Op = OpSRAI
			default:
				return ill
			}
			in.Imm = int32(raw >> 20 & 63)
		}
	case 0x1b: // OP-IMM-32: addiw, slliw, srliw, sraiw
		switch {
		case f3 == 0:
			in.Op, in.Imm = OpADDIW, immI
		case f3 == 1 && f7 == 0:
			in.Op, in.Imm = OpSLLIW, int32(rs2)
		case f3 == 5 && f7 == 0:
			in.Op, in.Imm = OpSRLIW, int32(rs2)
		case f3 == 5 && f7 == 0x20:
			in.Op, in.Imm = OpSRAIW, int32(rs2)
		default:
			return ill
		}
	case 0x33: // OP: funct7 rs2 rs1 funct3 rd 0110011
		switch f7 {
		case 0:
			in.Op = [8]Op{OpADD, OpSLL, OpSLT, OpSLTU, OpXOR, OpSRL, OpOR, OpAND}[f3]
		case 0x20:
			switch f3 {
			case 0:
				in.Op = OpSUB
			case 5:
				in.Op = OpSRA
			default:
				return ill
			}
		case 1: // M extension
			in.Op = [8]Op{OpMUL, OpMULH, OpMULHSU, OpMULHU, OpDIV, OpDIVU, OpREM, OpREMU}[f3]
		default:
			return ill
		}
	case 0x3b: // OP-32
		switch {
		case f7 == 0 && f3 == 0:
			in.Op = OpADDW
		case f7 == 0x20 && f3 == 0:
			in.Op = OpSUBW
		case f7 == 0 && f3 == 1:
			in.Op = OpSLLW
		case f7 == 0 && f3 == 5:
			in.Op = OpSRLW
		case f7 == 0x20 && f3 == 5:
			in.Op = OpSRAW
		case f7 == 1:
			in.Op = [8]Op{OpMULW, OpIllegal, OpIllegal, OpIllegal, OpDIVW, OpDIVUW, OpREMW, OpREMUW}[f3]
			if in.Op == OpIllegal {
				return ill
			}
		default:
			return ill
		}
	case 0x2f: // AMO: funct5 aq rl rs2 rs1 funct3 rd 0101111
		f5 := raw >> 27
		var base Op
		switch f3 {
		case 2:
			base = OpLRW
		case 3:
			base = OpLRD
		default:
			return ill
		}
		var off Op
		switch f5 {
		case 0x02: // LR: rs2 must be 0
			if rs2 != 0 {
				return ill
			}
			off = 0
		case 0x03:
			off = 1 // SC
		case 0x01:
			off = 2 // AMOSWAP
		case 0x00:
			off = 3 // AMOADD
		case 0x04:
			off = 4 // AMOXOR
		case 0x0c:
			off = 5 // AMOAND
		case 0x08:
			off = 6 // AMOOR
		case 0x10:
			off = 7 // AMOMIN
		case 0x14:
			off = 8 // AMOMAX
		case 0x18:
			off = 9 // AMOMINU
		case 0x1c:
			off = 10 // AMOMAXU
		default:
			return ill
		}
		in.Op = base + off
		in.Order = OrderAtomic
		if raw&(1<<26) != 0 {
			in.Order |= OrderAcquire
		}
		if raw&(1<<25) != 0 {
			in.Order |= OrderRelease
		}
	case 0x0f: // MISC-MEM: fence (f3 0), fence.i (f3 1)
		switch f3 {
		case 0:
			in.Op = OpFENCE
		case 1:
			in.Op = OpFENCEI
		default:
			return ill
		}
	case 0x73: // SYSTEM
		switch {
		case raw == 0x00000073:
			in.Op = OpECALL
		case raw == 0x00100073:
			in.Op = OpEBREAK
		case f3 == 2 || f3 == 3 || f3 == 6 || f3 == 7:
			// csrrs/csrrc(i) with rs1/uimm = 0 only read; user mode may read
			// the counters and write none of them.
			csr := raw >> 20
			if rs1 != 0 || (csr != CSRCycle && csr != CSRTime && csr != CSRInstret) {
				return ill
			}
			in.Op, in.Imm = OpCSRR, int32(csr)
		default:
			return ill
		}
	default:
		return ill
	}
	return in
}

// String disassembles the instruction in a simple operand form.
func (in Inst) String() string {
	rd := in.Rd
	if rd == regDiscard {
		rd = 0
	}
	switch {
	case in.Op == OpIllegal:
		return fmt.Sprintf("illegal 0x%08x", in.Raw)
	case in.Op == OpECALL || in.Op == OpEBREAK || in.Op == OpFENCE || in.Op == OpFENCEI:
		return in.Op.String()
	case in.Op == OpLUI || in.Op == OpAUIPC:
		return fmt.Sprintf("%s x%d, 0x%x", in.Op, rd, uint64(in.Imm)>>12&0xfffff)
	case in.Op == OpJAL:
		return fmt.Sprintf("jal x%d, %d", rd, in.Imm)
	case in.Op >= OpBEQ && in.Op <= OpBGEU:
		return fmt.Sprintf("%s x%d, x%d, %d", in.Op, in.Rs1, in.Rs2, in.Imm)
	case in.Op >= OpLB && in.Op <= OpLWU || in.Op == OpJALR:
		return fmt.Sprintf("%s x%d, %d(x%d)", in.Op, rd, in.Imm, in.Rs1)
	case in.Op >= OpSB && in.Op <= OpSD:
		return fmt.Sprintf("%s x%d, %d(x%d)", in.Op, in.Rs2, in.Imm, in.Rs1)
	case in.Op >= OpADDI && in.Op <= OpSRAI || in.Op >= OpADDIW && in.Op <= OpSRAIW:
		return fmt.Sprintf("%s x%d, x%d, %d", in.Op, rd, in.Rs1, in.Imm)
	case in.Op == OpCSRR:
		return fmt.Sprintf("csrr x%d, 0x%x", rd, in.Imm)
	case in.Op.IsAtomic():
		return fmt.Sprintf("%s x%d, x%d, (x%d)", in.Op, rd, in.Rs2, in.Rs1)
	}
	return fmt.Sprintf("%s x%d, x%d, x%d", in.Op, rd, in.Rs1, in.Rs2)
}
