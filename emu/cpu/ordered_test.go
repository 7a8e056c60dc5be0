package cpu

import "testing"

// TestMarkOrdered: the RISC-V mapping of C11 atomics (ISA manual Table
// A.6) marks an acquire load (lw; fence r,rw) and a release store (fence
// rw,w; sw) as atomic; plain neighbours and other fences do not.
func TestMarkOrdered(t *testing.T) {
	const (
		lw      = 0x0005a503 // lw a0, 0(a1)
		sw      = 0x00a5a023 // sw a0, 0(a1)
		addi    = 0x00150513 // addi a0, a0, 1
		fenceRR = 0x0230000f // fence r,rw
		fenceRW = 0x0310000f // fence rw,w
		fenceWW = 0x0110000f // fence w,w (no r before, no w after a load)
	)
	cases := []struct {
		name  string
		words []uint32
		want  []bool // Ordered per instruction
	}{
		{"acquire load", []uint32{lw, fenceRR}, []bool{true, false}},
		{"release store", []uint32{fenceRW, sw}, []bool{false, true}},
		{"plain load and store", []uint32{lw, addi, sw}, []bool{false, false, false}},
		{"load before a fence without r", []uint32{lw, fenceWW}, []bool{false, false}},
		{"store after fence r,rw (no w after)", []uint32{fenceRR, sw}, []bool{false, false}},
		{"seq_cst load", []uint32{0x0330000f, lw, fenceRR}, []bool{false, true, false}},
		{"load at the end of the page", []uint32{addi, lw}, []bool{false, false}},
		{"release store after a scheduled li", []uint32{fenceRW, addi, sw}, []bool{false, false, true}},
		{"acquire load, then an add, then the fence", []uint32{lw, addi, fenceRR}, []bool{true, false, false}},
		{"a branch between fence and store", []uint32{fenceRW, 0x00050463, sw}, []bool{false, false, false}}, // beqz a0
		{"a load between fence and store", []uint32{fenceRW, lw, sw}, []bool{false, false, false}},
	}
	for _, c := range cases {
		insts := make([]Inst, len(c.words))
		for i, w := range c.words {
			insts[i] = Decode(w)
		}
		markOrdered(insts)
		for i := range insts {
			if insts[i].Ordered != c.want[i] {
				t.Errorf("%s: instruction %d (%s): ordered %v, want %v", c.name, i, insts[i].Op, insts[i].Ordered, c.want[i])
			}
		}
	}
}
