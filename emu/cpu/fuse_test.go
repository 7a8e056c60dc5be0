package cpu

import (
	"fmt"
	"math/rand"
	"testing"

	"landslide/emu/mem"
)

// Encoders for the register-only instructions the fused pairs are made of.
func encR(f7, rs2, rs1, f3, rd, opc uint32) uint32 {
	return f7<<25 | rs2<<20 | rs1<<15 | f3<<12 | rd<<7 | opc
}

func encI(imm int32, rs1, f3, rd, opc uint32) uint32 {
	return uint32(imm)&0xfff<<20 | rs1<<15 | f3<<12 | rd<<7 | opc
}

// encB encodes a conditional branch (funct3 f3) at instruction index
// here to index to.
func encB(f3, rs1, rs2 uint32, here, to int) uint32 {
	imm := uint32(int32(4 * (to - here)))
	return (imm>>12&1)<<31 | (imm>>5&0x3f)<<25 | rs2<<20 | rs1<<15 | f3<<12 | (imm>>1&0xf)<<8 | (imm>>11&1)<<7 | 0x63
}

// branchF3 are the branches' funct3.
var branchF3 = map[Op]uint32{OpBEQ: 0, OpBNE: 1, OpBLT: 4, OpBGE: 5, OpBLTU: 6, OpBGEU: 7}

// pairOps are the instructions fusedWith knows, as encoders of
// (rd, rs1, rs2, a random source).
var pairOps = map[Op]func(rd, rs1, rs2 uint32, r *rand.Rand) uint32{
	OpLUI:   func(rd, _, _ uint32, r *rand.Rand) uint32 { return uint32(r.Int31())&^0xfff | rd<<7 | 0x37 },
	OpADDI:  func(rd, rs1, _ uint32, r *rand.Rand) uint32 { return encI(r.Int31n(4096)-2048, rs1, 0, rd, 0x13) },
	OpADDIW: func(rd, rs1, _ uint32, r *rand.Rand) uint32 { return encI(r.Int31n(4096)-2048, rs1, 0, rd, 0x1b) },
	OpANDI:  func(rd, rs1, _ uint32, r *rand.Rand) uint32 { return encI(r.Int31n(4096)-2048, rs1, 7, rd, 0x13) },
	OpSLLI:  func(rd, rs1, _ uint32, r *rand.Rand) uint32 { return encI(r.Int31n(64), rs1, 1, rd, 0x13) },
	OpSRLI:  func(rd, rs1, _ uint32, r *rand.Rand) uint32 { return encI(r.Int31n(64), rs1, 5, rd, 0x13) },
	OpSRAI:  func(rd, rs1, _ uint32, r *rand.Rand) uint32 { return encI(0x400|r.Int31n(64), rs1, 5, rd, 0x13) },
	OpADD:   func(rd, rs1, rs2 uint32, _ *rand.Rand) uint32 { return encR(0, rs2, rs1, 0, rd, 0x33) },
	OpSUB:   func(rd, rs1, rs2 uint32, _ *rand.Rand) uint32 { return encR(0x20, rs2, rs1, 0, rd, 0x33) },
	OpXOR:   func(rd, rs1, rs2 uint32, _ *rand.Rand) uint32 { return encR(0, rs2, rs1, 4, rd, 0x33) },
	OpOR:    func(rd, rs1, rs2 uint32, _ *rand.Rand) uint32 { return encR(0, rs2, rs1, 6, rd, 0x33) },
	OpAND:   func(rd, rs1, rs2 uint32, _ *rand.Rand) uint32 { return encR(0, rs2, rs1, 7, rd, 0x33) },
	OpMUL:   func(rd, rs1, rs2 uint32, _ *rand.Rand) uint32 { return encR(1, rs2, rs1, 0, rd, 0x33) },
}

// fusedPairs are the pairs fuse.go fuses, in the order of their codes.
var fusedPairs = [fuseEnd - opCount][2]Op{
	{OpLUI, OpADDI}, {OpLUI, OpADDIW}, {OpSLLI, OpSRLI}, {OpSLLI, OpSRAI},
	{OpSLLI, OpADD}, {OpSLLI, OpSUB}, {OpSLLI, OpXOR}, {OpSLLI, OpOR}, {OpSLLI, OpAND},
	{OpSRLI, OpADD}, {OpSRLI, OpSUB}, {OpSRLI, OpXOR}, {OpSRLI, OpOR}, {OpSRLI, OpAND}, {OpSRLI, OpANDI},
	{OpMUL, OpADD}, {OpADDI, OpADD}, {OpADDI, OpADDI},
	{OpADDI, OpBEQ}, {OpADDI, OpBNE}, {OpADDI, OpBLT}, {OpADDI, OpBGE}, {OpADDI, OpBLTU}, {OpADDI, OpBGEU},
	{OpADD, OpBEQ}, {OpADD, OpBNE},
}

// TestFusedPairsMatchReference runs random straight lines of the fused
// pairs' instructions, over few registers (x0 and a0..a3, so that a
// second instruction often reads the first's result once, twice or not
// at all, and results go to x0), in the block interpreter and in the
// reference one, under random limits and breakpoints that fall between a
// pair's halves, and checks that every fused pair was in the code.
func TestFusedPairsMatchReference(t *testing.T) {
	ops := make([]Op, 0, len(pairOps))
	for op := range pairOps {
		ops = append(ops, op)
	}
	// Deterministic order for the random choices.
	for i := range ops {
		for j := i + 1; j < len(ops); j++ {
			if ops[j] < ops[i] {
				ops[i], ops[j] = ops[j], ops[i]
			}
		}
	}
	regs := []uint32{0, 10, 11, 12, 13}
	for seed := int64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		reg := func() uint32 { return regs[r.Intn(len(regs))] }
		var prog []uint32
		for len(prog) < 1000 {
			if r.Intn(4) == 0 {
				op := ops[r.Intn(len(ops))]
				prog = append(prog, pairOps[op](reg(), reg(), reg(), r))
				continue
			}
			// A pair's two operations, the second reading the first's
			// result as either operand, both or (sometimes) neither.
			p := fusedPairs[r.Intn(len(fusedPairs))]
			rd := reg()
			rs1, rs2 := reg(), reg()
			switch r.Intn(4) {
			case 0:
				rs1 = rd
			case 1:
				rs2 = rd
			case 2:
				rs1, rs2 = rd, rd
			}
			prog = append(prog, pairOps[p[0]](rd, reg(), reg(), r))
			if f3, ok := branchF3[p[1]]; ok {
				// Anywhere in the line, or out of it to the jump back.
				prog = append(prog, encB(f3, rs1, rs2, len(prog), r.Intn(1001)))
			} else {
				prog = append(prog, pairOps[p[1]](reg(), rs1, rs2, r))
			}
		}
		prog = prog[:1000] // the jump back at 1000 is a branch's farthest target
		// jal x0 back to the start.
		imm := uint32(-int32(4*len(prog))) & 0x1fffff
		prog = append(prog, (imm>>20&1)<<31|(imm>>1&0x3ff)<<21|(imm>>11&1)<<20|(imm>>12&0xff)<<12|0x6f)

		const code = 0x10000
		var init [33]uint64
		for _, x := range regs[1:] {
			init[x] = r.Uint64()
		}
		var cpus [2]*CPU
		for i := range cpus {
			m := mem.New()
			if err := m.Map(code, mem.PageSize, mem.PermR|mem.PermX); err != nil {
				t.Fatal(err)
			}
			for j, w := range prog {
				m.Write32(code+uint64(4*j), w)
			}
			c := New(m)
			c.PC, c.X = code, init
			cpus[i] = c
		}
		for round := 0; round < 3000; round++ {
			switch k := r.Intn(10); {
			case k < 2:
				pc := code + 4*uint64(r.Intn(len(prog)))
				cpus[0].SetBreakpoint(pc)
				cpus[1].SetBreakpoint(pc)
			case k < 3:
				pc := cpus[0].PC + 4*uint64(r.Intn(3))
				cpus[0].ClearBreakpoint(pc)
				cpus[1].ClearBreakpoint(pc)
			}
			limit := uint64(r.Intn(8))
			if r.Intn(4) == 0 {
				limit = uint64(r.Intn(3000))
			}
			s0, s1 := cpus[0].runRef(limit), cpus[1].Run(limit)
			if s0 != s1 || cpus[0].PC != cpus[1].PC || cpus[0].Instret != cpus[1].Instret || cpus[0].X != cpus[1].X {
				t.Fatalf("seed %d round %d, Run(%d): stop %+v pc %x instret %d regs %x;\nreference %+v pc %x instret %d regs %x",
					seed, round, limit, s1, cpus[1].PC, cpus[1].Instret, cpus[1].X, s0, cpus[0].PC, cpus[0].Instret, cpus[0].X)
			}
			if s0.Reason == StopBreakpoint {
				cpus[0].ResumeFromBreakpoint()
				cpus[1].ResumeFromBreakpoint()
			}
		}
		// Every pair kind was fused somewhere in this program's page.
		seen := map[Op]bool{}
		for _, in := range cpus[1].code.insts[:len(prog)] {
			if in.fop >= opCount {
				seen[in.fop] = true
			}
		}
		if len(seen) != int(fuseEnd-opCount) {
			var missing []string
			for f := opCount; f < fuseEnd; f++ {
				if !seen[f] {
					missing = append(missing, fmt.Sprint(int(f-opCount)))
				}
			}
			t.Fatalf("seed %d: fused pairs %v never formed", seed, missing)
		}
	}
}

// TestFusedWith: which adjacent instructions fuse, from their encodings.
func TestFusedWith(t *testing.T) {
	for _, c := range []struct {
		a, b uint32
		want Op
	}{
		{0x00d51793, 0x00a7c533, fuseSLLIxXOR},  // slli a5,a0,13; xor a0,a5,a0
		{0x00d51793, 0x00f54533, fuseSLLIxXOR},  // slli a5,a0,13; xor a0,a0,a5
		{0x00455793, 0x7f87f793, fuseSRLIxANDI}, // srli a5,a0,4; andi a5,a5,2040
		{0x02c508b3, 0x011787b3, fuseMULxADD},   // mul a7,a0,a2; add a5,a5,a7
		{0x0037d793, 0x40f007b3, fuseSRLIxSUB},  // srli a5,a5,3; neg a5,a5
		{0x0037d793, 0x40078533, OpSRLI},        // srli a5,a5,3; sub a0,a5,zero: a5 is the minuend
		{0x00d51013, 0x00004533, OpSLLI},        // slli zero,a0,13; xor a0,zero,zero: the result is discarded
		{0x00d51793, 0x00b54533, OpSLLI},        // slli a5,a0,13; xor a0,a0,a1: a5 unread
		{0x02051513, 0x02055513, fuseSLLIxSRLI}, // slli a0,a0,32; srli a0,a0,32 (zext.w)
		{0x000125b7, 0x29058593, fuseLUIxADDI},  // lui a1,18; addi a1,a1,656
		{0x000125b7, 0x2905859b, fuseLUIxADDIW}, // lui a1,18; addiw a1,a1,656
		{0x000125b7, 0x29050593, OpLUI},         // lui a1,18; addi a1,a0,656
		{0x00158593, 0xfee59ce3, fuseADDIxBNE},  // addi a1,a1,1; bne a1,a4,-8
		{0x00a78533, 0x04e58463, fuseADDxBEQ},   // add a0,a5,a0; beq a1,a4,+72
		{0x00158593, 0x00e59163, OpADDI},        // addi a1,a1,1; bne a1,a4,+2: a misaligned target is step's
		{0x00a78533, 0x00e5c463, OpADD},         // add a0,a5,a0; blt a1,a4,+8: add fuses with beq and bne only
	} {
		a, b := Decode(c.a), Decode(c.b)
		if got := fusedWith(&a, &b); got != c.want {
			t.Errorf("%v; %v: dispatch %d, want %d", a, b, got, c.want)
		}
	}
}
