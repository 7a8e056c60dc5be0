package elfsym

// Stack unwinding.
//
// Every guest function built with -fno-omit-frame-pointer starts with
//
//	addi sp, sp, -N
//	sd   ra, N-8(sp)
//	sd   s0, N-16(sp)
//	[sd  s1.., ..(sp)]
//	addi s0, sp, N
//
// so in the body s0 holds the canonical frame address (CFA: the sp the
// caller had at the call), the return address is at s0-8 and the caller's
// s0 at s0-16. (A variadic function sets s0 = sp+N-64, keeping its register
// save area above s0; the record is still at s0-8 and s0-16.) analyze
// finds N, s0's offset and the slots from the instructions themselves (so
// large frames and other layouts work as long as the shape is the same),
// and records where each prologue instruction is, which is what frame 0
// needs when the pc is inside the prologue.
//
// Frame 0 (the thread's own pc) is handled in this order:
//  1. pc not in code (a call through a bad pointer): the caller is ra, as
//     if pc were a leaf without a frame.
//  2. pc inside the prologue, before s0 is set: the caller's ra and s0 are
//     still in their registers; the CFA is sp minus what the executed
//     prologue instructions subtracted.
//  3. the instructions from pc on reach a return (ret, or a jump out of the
//     function: a tail call) without a branch, call or store: execute them
//     symbolically on sp, s0 and ra (loads read the stack through read).
//     This covers every point of the epilogue, including after s0 or ra
//     have been reloaded and after sp has been popped.
//  4. otherwise the body rule of the function (s0-based).
//
// Outer frames are always at a call site, where the body rule holds.

// frameKind says how a function's body finds its caller.
type frameKind uint8

const (
	// kindUnknown: no analysis; use the standard record (ra at s0-8,
	// caller's s0 at s0-16).
	kindUnknown frameKind = iota
	// kindFrameless: the function never touches sp, s0 or the stack; ra
	// and s0 still hold the caller's values (assembly leaves).
	kindFrameless
	// kindSP: a frame without s0 (assembly): CFA = sp + size.
	kindSP
	// kindFP: the clang frame: CFA = s0 - fpOff.
	kindFP
)

type prologueStep struct {
	addr  uint64 // address of an instruction that moves sp
	after int64  // sp - CFA once it has executed
}

type frameRule struct {
	kind      frameKind
	steps     []prologueStep
	bodyStart uint64 // first address after the prologue
	spOff     int64  // sp - CFA in the body (kindSP)
	fpOff     int64  // s0 - CFA in the body (kindFP)
	raSlot    int64  // ra saved at CFA+raSlot, if raSaved
	fpSlot    int64  // caller's s0 saved at CFA+fpSlot, if fpSaved
	raSaved   bool
	fpSaved   bool
}

// The registers the unwinder cares about.
const (
	regRA = 1
	regSP = 2
	regFP = 8 // s0
)

// RV64 instruction fields.
func opcode(i uint32) uint32 { return i & 0x7f }
func rd(i uint32) uint32     { return i >> 7 & 31 }
func funct3(i uint32) uint32 { return i >> 12 & 7 }
func rs1(i uint32) uint32    { return i >> 15 & 31 }
func rs2(i uint32) uint32    { return i >> 20 & 31 }
func funct7(i uint32) uint32 { return i >> 25 }
func immI(i uint32) int64    { return int64(int32(i) >> 20) }
func immS(i uint32) int64    { return int64(int32(i)>>25<<5) | int64(i>>7&31) }
func immU(i uint32) int64    { return int64(int32(i & 0xfffff000)) }
func immJ(i uint32) int64 {
	v := (i>>31&1)<<20 | (i>>12&0xff)<<12 | (i>>20&1)<<11 | (i>>21&0x3ff)<<1
	return int64(int32(v<<11) >> 11)
}

const (
	opLoad   = 0x03
	opMisc   = 0x0f // fence
	opImm    = 0x13
	opAUIPC  = 0x17
	opImm32  = 0x1b
	opStore  = 0x23
	opAMO    = 0x2f
	opOp     = 0x33
	opLUI    = 0x37
	opOp32   = 0x3b
	opBranch = 0x63
	opJALR   = 0x67
	opJAL    = 0x6f
	opSystem = 0x73
)

// writesReg reports the destination register of an instruction that has
// one (0 when it has none or writes x0).
func writesReg(i uint32) uint32 {
	switch opcode(i) {
	case opLoad, opImm, opAUIPC, opImm32, opAMO, opOp, opLUI, opOp32, opJALR, opJAL, opSystem:
		return rd(i)
	}
	return 0
}

func isControl(i uint32) bool {
	switch opcode(i) {
	case opBranch, opJAL, opJALR, opSystem:
		return true
	}
	return i&3 != 3 // compressed or not an instruction: stop
}

const maxPrologue = 64

// analyze decodes the start of fn and works out its frame layout.
func (s *Symbols) analyze(fn Func) frameRule {
	var r frameRule
	var d int64 // sp - CFA so far
	pc := fn.Start
	end := fn.End()
	for n := 0; n < maxPrologue && pc < end; n, pc = n+1, pc+4 {
		in, ok := s.insn(pc)
		if !ok || isControl(in) {
			break
		}
		op, f3 := opcode(in), funct3(in)
		switch {
		case op == opImm && f3 == 0 && rd(in) == regSP && rs1(in) == regSP:
			d += immI(in)
			r.steps = append(r.steps, prologueStep{addr: pc, after: d})
			continue
		case op == opStore && f3 == 3 && rs1(in) == regSP:
			switch rs2(in) {
			case regRA:
				if !r.raSaved {
					r.raSaved, r.raSlot = true, d+immS(in)
				}
			case regFP:
				if !r.fpSaved {
					r.fpSaved, r.fpSlot = true, d+immS(in)
				}
			}
			continue
		case op == opImm && f3 == 0 && rd(in) == regFP && rs1(in) == regSP:
			r.kind, r.fpOff, r.bodyStart = kindFP, d+immI(in), pc+4
			return r
		}
		if w := writesReg(in); w == regSP || w == regFP || w == regRA {
			break
		}
		// Anything else (an argument copied to a saved register, ...) is
		// harmless: keep looking for the prologue's end.
	}
	r.bodyStart = pc
	switch {
	case d == 0 && !r.raSaved && !r.fpSaved:
		r.kind, r.steps = kindFrameless, nil
		r.bodyStart = fn.Start
	case d < 0:
		r.kind, r.spOff = kindSP, d
	default:
		r.kind = kindUnknown
	}
	return r
}

// standard is the rule for code without analysis: the clang frame record.
var standard = frameRule{kind: kindFP, raSlot: -8, fpSlot: -16, raSaved: true, fpSaved: true}

// regs is the state of one frame during unwinding.
type regs struct {
	pc, sp, fp uint64
}

// DefaultMaxFrames is Unwind's limit when max <= 0.
const DefaultMaxFrames = 256

// Unwind returns the pcs of the frames of a stopped thread: frame 0 is pc,
// the outer frames are return addresses (describe them with
// Describe(pc, true)). ra, sp and fp (s0) are the thread's registers; read
// reads a little-endian u64 of guest memory (it should ignore permissions).
//
// When pc is not code (a call through a null or wild pointer), frame 0 is
// still pc and its caller is taken from ra, as for a leaf without a frame.
//
// Unwinding stops at a return address of 0 or outside code, when the frame
// pointer is 0 or the frames stop moving up the stack (a cycle), when a
// read fails, or after max frames (DefaultMaxFrames when max <= 0).
func (s *Symbols) Unwind(pc, ra, sp, fp uint64, read func(addr uint64) (uint64, bool), max int) []uint64 {
	frames, _ := s.unwind(pc, ra, sp, fp, read, max, false)
	return frames
}

// UnwindCFA is Unwind with each frame's canonical frame address: the sp
// its caller had at the call, so frame i's stack memory is [cfa[i-1],
// cfa[i]) (from sp for frame 0). cfa can be one shorter than the frames,
// when the outermost frame's could not be found.
func (s *Symbols) UnwindCFA(pc, ra, sp, fp uint64, read func(addr uint64) (uint64, bool), max int) (frames, cfa []uint64) {
	return s.unwind(pc, ra, sp, fp, read, max, true)
}

func (s *Symbols) unwind(pc, ra, sp, fp uint64, read func(addr uint64) (uint64, bool), max int, withCFA bool) (frames, cfas []uint64) {
	if max <= 0 {
		max = DefaultMaxFrames
	}
	frames = make([]uint64, 1, 4) // one allocation for most stacks, not one per doubling
	frames[0] = pc
	caller, ok := s.unwindFirst(pc, ra, sp, fp, read)
	for ok {
		if withCFA {
			cfas = append(cfas, caller.sp) // the caller's sp: this frame's CFA
		}
		if len(frames) >= max || caller.pc == 0 || caller.pc%4 != 0 || !s.IsInstruction(caller.pc-4) {
			break
		}
		frames = append(frames, caller.pc)
		caller, ok = s.unwindOuter(caller, read)
	}
	return frames, cfas
}

// unwindFirst finds the caller of the innermost frame. The result's sp is
// the frame's CFA.
func (s *Symbols) unwindFirst(pc, ra, sp, fp uint64, read func(uint64) (uint64, bool)) (regs, bool) {
	if !s.IsInstruction(pc) {
		// Jumped somewhere that is not code: most likely a call through a
		// bad pointer, so ra is the caller and no frame was set up.
		return regs{pc: ra, sp: sp, fp: fp}, true
	}
	fn := s.funcRange(pc)
	rule := standard
	if fn != nil {
		rule = fn.rule
		if pc < rule.bodyStart {
			// In the prologue: sp has moved by the executed steps; ra and
			// s0 are still the caller's.
			var d int64
			for _, st := range rule.steps {
				if st.addr < pc {
					d = st.after
				}
			}
			return regs{pc: ra, sp: sp - uint64(d), fp: fp}, true
		}
	}
	if c, ok := s.emulateToReturn(pc, fn, ra, sp, fp, read); ok {
		return c, true
	}
	switch rule.kind {
	case kindFrameless:
		return regs{pc: ra, sp: sp, fp: fp}, true
	case kindSP:
		cfa := sp - uint64(rule.spOff)
		return s.fromSlots(rule, cfa, ra, fp, read)
	case kindUnknown:
		rule = standard
	}
	cfa := fp - uint64(rule.fpOff)
	if fp == 0 || cfa < sp {
		return regs{}, false // s0 is not a frame pointer into this stack
	}
	return s.fromSlots(rule, cfa, ra, 0, read)
}

// fromSlots reads the caller's ra and s0 from the frame at cfa; registers
// stand in for slots the function does not use.
func (s *Symbols) fromSlots(rule frameRule, cfa, ra, fp uint64, read func(uint64) (uint64, bool)) (regs, bool) {
	c := regs{pc: ra, sp: cfa, fp: fp}
	var ok bool
	if rule.raSaved {
		if c.pc, ok = read(cfa + uint64(rule.raSlot)); !ok {
			return regs{}, false
		}
	}
	if rule.fpSaved {
		if c.fp, ok = read(cfa + uint64(rule.fpSlot)); !ok {
			return regs{}, false
		}
	}
	return c, true
}

// unwindOuter finds the caller of an outer frame, stopped at the call
// before cur.pc. cur.sp is the frame's sp (the CFA of the frame it called).
func (s *Symbols) unwindOuter(cur regs, read func(uint64) (uint64, bool)) (regs, bool) {
	rule := standard
	if fn := s.funcRange(cur.pc - 4); fn != nil {
		switch fn.rule.kind {
		case kindFP, kindSP:
			rule = fn.rule
		}
	}
	var cfa uint64
	if rule.kind == kindSP {
		cfa = cur.sp - uint64(rule.spOff)
		if !rule.raSaved {
			return regs{}, false // ra was clobbered by the call
		}
	} else {
		if cur.fp == 0 || cur.fp%8 != 0 || !rule.raSaved {
			return regs{}, false
		}
		cfa = cur.fp - uint64(rule.fpOff)
	}
	if cfa <= cur.sp {
		return regs{}, false // not moving up the stack: a cycle or garbage
	}
	// ra does not survive the call; s0 does (it is callee-saved), unless
	// this function itself repurposed it as its frame pointer.
	callerFP := cur.fp
	if rule.kind == kindFP {
		callerFP = 0
	}
	return s.fromSlots(rule, cfa, 0, callerFP, read)
}

const maxEmulate = 256

// emulateToReturn executes the instructions from pc symbolically, tracking
// only register values it can know, until a return or a jump out of the
// function. It fails on a branch, call, store, system instruction or
// anything it cannot decode, and when ra, sp or s0 is unknown at the end.
func (s *Symbols) emulateToReturn(pc uint64, fn *fnRange, ra, sp, fp uint64, read func(uint64) (uint64, bool)) (regs, bool) {
	var val [32]uint64
	var known [32]bool
	val[regRA], val[regSP], val[regFP] = ra, sp, fp
	known[0], known[regRA], known[regSP], known[regFP] = true, true, true, true
	inFunc := func(a uint64) bool {
		if fn != nil {
			return a >= fn.Start && a < fn.End()
		}
		return s.IsInstruction(a)
	}
	set := func(r uint32, v uint64, ok bool) {
		if r != 0 {
			val[r], known[r] = v, ok
		}
	}
	done := func() (regs, bool) {
		if !known[regRA] || !known[regSP] || !known[regFP] {
			return regs{}, false
		}
		return regs{pc: val[regRA], sp: val[regSP], fp: val[regFP]}, true
	}
	for n := 0; n < maxEmulate; n++ {
		if !inFunc(pc) {
			return regs{}, false
		}
		in, ok := s.insn(pc)
		if !ok || in&3 != 3 {
			return regs{}, false
		}
		a, b := rs1(in), rs2(in)
		switch opcode(in) {
		case opImm:
			switch funct3(in) {
			case 0: // addi
				set(rd(in), val[a]+uint64(immI(in)), known[a])
			default:
				set(rd(in), 0, false)
			}
		case opImm32:
			if funct3(in) == 0 { // addiw
				set(rd(in), uint64(int64(int32(val[a]+uint64(immI(in))))), known[a])
			} else {
				set(rd(in), 0, false)
			}
		case opLUI:
			set(rd(in), uint64(immU(in)), true)
		case opAUIPC:
			set(rd(in), pc+uint64(immU(in)), true)
		case opOp:
			switch {
			case funct3(in) == 0 && funct7(in) == 0: // add
				set(rd(in), val[a]+val[b], known[a] && known[b])
			case funct3(in) == 0 && funct7(in) == 0x20: // sub
				set(rd(in), val[a]-val[b], known[a] && known[b])
			default:
				set(rd(in), 0, false)
			}
		case opOp32:
			set(rd(in), 0, false)
		case opLoad:
			if funct3(in) == 3 && known[a] { // ld
				v, ok := read(val[a] + uint64(immI(in)))
				set(rd(in), v, ok)
			} else {
				set(rd(in), 0, false)
			}
		case opMisc:
		case opJAL:
			if rd(in) != 0 {
				return regs{}, false // a call
			}
			target := pc + uint64(immJ(in))
			if !inFunc(target) {
				return done() // tail call
			}
			pc = target
			continue
		case opJALR:
			if rd(in) != 0 {
				return regs{}, false // a call
			}
			return done() // ret, or an indirect tail call
		default: // stores, branches, atomics, system, unknown
			return regs{}, false
		}
		pc += 4
	}
	return regs{}, false
}
