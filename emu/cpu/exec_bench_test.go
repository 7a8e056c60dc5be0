package cpu

import (
	"slices"
	"testing"

	"landslide/emu/mem"
)

// Microbenchmarks of the interpreter's inner loop: b.N instructions of a
// loop of register-only instructions (ns/op is ns per guest instruction).
// go test ./emu/cpu -run XXX -bench Exec -benchtime 100000000x

// benchProg runs body, followed by a jump back to its start, for b.N
// instructions.
func benchProg(b *testing.B, body []uint32) {
	m := mem.New()
	const code = 0x10000
	if err := m.Map(code, 4*mem.PageSize, mem.PermR|mem.PermX); err != nil {
		b.Fatal(err)
	}
	prog := append([]uint32{}, body...)
	// jal x0, back to start
	off := -int32(4 * len(prog))
	imm := uint32(off) & 0x1fffff
	jal := (imm>>20&1)<<31 | (imm>>1&0x3ff)<<21 | (imm>>11&1)<<20 | (imm>>12&0xff)<<12 | 0x6f
	prog = append(prog, jal)
	for i, w := range prog {
		m.Write32(code+uint64(4*i), w)
	}
	c := New(m)
	c.PC = code
	b.ResetTimer()
	if s := c.Run(uint64(b.N)); s.Reason != StopLimit {
		b.Fatalf("stop %v at %x", s.Reason, s.PC)
	}
}

// rep repeats ws to n instructions.
func rep(n int, ws ...uint32) []uint32 {
	var out []uint32
	for len(out) < n {
		out = append(out, ws...)
	}
	return out[:n]
}

// BenchmarkExecDep: one long chain of dependent additions (addi a0,a0,1).
func BenchmarkExecDep(b *testing.B) { benchProg(b, rep(900, 0x00150513)) }

// BenchmarkExecIndep: eight independent chains (addi a0..a7, +1 each).
func BenchmarkExecIndep(b *testing.B) {
	var ws []uint32
	for r := uint32(10); r < 18; r++ {
		ws = append(ws, 1<<20|r<<15|r<<7|0x13)
	}
	benchProg(b, rep(900, ws...))
}

// BenchmarkExecMixed: the ALU work of bench/loop's loop, straight line.
func BenchmarkExecMixed(b *testing.B) {
	benchProg(b, rep(900, loopALU...))
}

// loopALU is the ALU work of one iteration of bench/loop's loop.
var loopALU = []uint32{
	0x00455793, // srli a5,a0,4
	0x7f87f793, // andi a5,a5,2040
	0x00d78833, // add a6,a5,a3
	0x00d51793, // slli a5,a0,13
	0x00a7c533, // xor a0,a5,a0
	0x00755793, // srli a5,a0,7
	0x00a7c533, // xor a0,a5,a0
	0x01151893, // slli a7,a0,17
	0x00a8c533, // xor a0,a7,a0
	0x02c508b3, // mul a7,a0,a2
	0x011787b3, // add a5,a5,a7
	0x0017f893, // andi a7,a5,1
}

// BenchmarkExecLoop: the loop of bench/loop without its memory accesses,
// as a loop (two blocks an iteration).
func BenchmarkExecLoop(b *testing.B) {
	ws := append(slices.Clone(loopALU),
		0x00088463, // beqz a7, +8
		0x00000013, // nop
		0x00000013, // nop
	)
	benchProg(b, ws)
}
