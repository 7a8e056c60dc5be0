package elfsym

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"landslide/emu/mem"
)

// The unwinding tests run testdata/chain.c on a tiny interpreter of
// llvm-objdump's disassembly text (independent of this package's decoder)
// with a shadow call stack, and at every executed instruction check that
// Unwind, given only pc, ra, sp, s0 and memory, finds exactly the return
// addresses on the shadow stack. That covers every pc of every function on
// the chain: prologues, bodies and epilogues, for frames of different
// shapes.

type dinsn struct {
	addr uint64
	op   string
	args []string
	fn   string
}

// disassemble parses llvm-objdump -d.
func disassemble(t *testing.T, path string) (code map[uint64]dinsn, funcs map[string][]dinsn) {
	code, funcs = map[uint64]dinsn{}, map[string][]dinsn{}
	fnRe := regexp.MustCompile(`^[0-9a-f]{16} <(.+)>:$`)
	inRe := regexp.MustCompile(`^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$`)
	fn := ""
	for _, line := range strings.Split(run(t, "llvm-objdump", "-d", "--no-show-raw-insn", path), "\n") {
		if m := fnRe.FindStringSubmatch(line); m != nil {
			fn = m[1]
			continue
		}
		m := inRe.FindStringSubmatch(line)
		if m == nil || fn == "" {
			continue
		}
		addr, err := strconv.ParseUint(m[1], 16, 64)
		if err != nil {
			continue
		}
		var args []string
		if a := strings.TrimSpace(m[3]); a != "" {
			for _, x := range strings.Split(a, ",") {
				args = append(args, strings.Fields(x)[0])
			}
		}
		in := dinsn{addr, m[2], args, fn}
		code[addr] = in
		funcs[fn] = append(funcs[fn], in)
	}
	return code, funcs
}

var abiNames = map[string]int{"zero": 0, "ra": 1, "sp": 2, "gp": 3, "tp": 4, "t0": 5, "t1": 6, "t2": 7,
	"s0": 8, "fp": 8, "s1": 9, "a0": 10, "a1": 11, "a2": 12, "a3": 13, "a4": 14, "a5": 15, "a6": 16, "a7": 17,
	"s2": 18, "s3": 19, "s4": 20, "s5": 21, "s6": 22, "s7": 23, "s8": 24, "s9": 25, "s10": 26, "s11": 27,
	"t3": 28, "t4": 29, "t5": 30, "t6": 31}

type machine struct {
	t      *testing.T
	code   map[uint64]dinsn
	m      *mem.Memory
	x      [32]uint64
	pc     uint64
	shadow []uint64 // return addresses, outermost first
}

func (mc *machine) reg(s string) int {
	r, ok := abiNames[s]
	if !ok {
		mc.t.Fatalf("0x%x: unknown register %q", mc.pc, s)
	}
	return r
}

func (mc *machine) imm(s string) int64 {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		mc.t.Fatalf("0x%x: bad immediate %q", mc.pc, s)
	}
	return v
}

// memop parses "off(reg)" into an address.
func (mc *machine) memop(s string) uint64 {
	i := strings.IndexByte(s, '(')
	off := int64(0)
	if i > 0 {
		off = mc.imm(s[:i])
	}
	return mc.x[mc.reg(strings.TrimSuffix(s[i+1:], ")"))] + uint64(off)
}

func sext32(v uint64) uint64 { return uint64(int64(int32(uint32(v)))) }

// step executes one instruction; it returns false at ecall.
func (mc *machine) step() bool {
	in, ok := mc.code[mc.pc]
	if !ok {
		mc.t.Fatalf("no instruction at 0x%x", mc.pc)
	}
	a := in.args
	x := &mc.x
	arg := func(i int) uint64 { return x[mc.reg(a[i])] }
	set := func(v uint64) {
		if r := mc.reg(a[0]); r != 0 {
			x[r] = v
		}
	}
	next := mc.pc + 4
	branch := func(taken bool) {
		if taken {
			next = uint64(mc.imm(a[len(a)-1]))
		}
	}
	load := func(size int, signed bool) {
		addr := mc.memop(a[1])
		b := make([]byte, 8)
		if err := mc.m.ReadBytes(addr, b[:size]); err != nil {
			mc.t.Fatalf("0x%x %s: %v", mc.pc, in.op, err)
		}
		v := le.Uint64(b)
		if signed {
			shift := 64 - 8*size
			v = uint64(int64(v<<shift) >> shift)
		}
		set(v)
	}
	store := func(size int) {
		b := make([]byte, 8)
		le.PutUint64(b, arg(0))
		if err := mc.m.WriteBytes(mc.memop(a[1]), b[:size]); err != nil {
			mc.t.Fatalf("0x%x %s: %v", mc.pc, in.op, err)
		}
	}
	call := func(target uint64) {
		x[1] = mc.pc + 4
		mc.shadow = append(mc.shadow, mc.pc+4)
		next = target
	}
	switch in.op {
	case "addi":
		set(arg(1) + uint64(mc.imm(a[2])))
	case "addiw":
		set(sext32(arg(1) + uint64(mc.imm(a[2]))))
	case "andi":
		set(arg(1) & uint64(mc.imm(a[2])))
	case "slli":
		set(arg(1) << mc.imm(a[2]))
	case "srli":
		set(arg(1) >> mc.imm(a[2]))
	case "slliw":
		set(sext32(arg(1) << mc.imm(a[2])))
	case "add":
		set(arg(1) + arg(2))
	case "addw":
		set(sext32(arg(1) + arg(2)))
	case "sub":
		set(arg(1) - arg(2))
	case "mv":
		set(arg(1))
	case "li":
		set(uint64(mc.imm(a[1])))
	case "lui":
		set(sext32(uint64(mc.imm(a[1])) << 12))
	case "auipc":
		set(mc.pc + sext32(uint64(mc.imm(a[1]))<<12))
	case "ld":
		load(8, true)
	case "lw":
		load(4, true)
	case "lbu":
		load(1, false)
	case "sd":
		store(8)
	case "sw":
		store(4)
	case "sb":
		store(1)
	case "bne":
		branch(arg(0) != arg(1))
	case "beq":
		branch(arg(0) == arg(1))
	case "blt":
		branch(int64(arg(0)) < int64(arg(1)))
	case "bge":
		branch(int64(arg(0)) >= int64(arg(1)))
	case "blez":
		branch(int64(arg(0)) <= 0)
	case "bgtz":
		branch(int64(arg(0)) > 0)
	case "beqz":
		branch(arg(0) == 0)
	case "bnez":
		branch(arg(0) != 0)
	case "j":
		next = uint64(mc.imm(a[0]))
	case "jal":
		call(uint64(mc.imm(a[0])))
	case "jalr": // jalr off(rs) or jalr rs: a call through ra
		if strings.Contains(a[0], "(") {
			call(mc.memop(a[0]))
		} else {
			call(arg(0))
		}
	case "ret":
		n := len(mc.shadow)
		if n == 0 || mc.shadow[n-1] != x[1] {
			mc.t.Fatalf("0x%x: ret to 0x%x, shadow stack %x", mc.pc, x[1], mc.shadow)
		}
		mc.shadow = mc.shadow[:n-1]
		next = x[1]
	case "ecall":
		return false
	default:
		mc.t.Fatalf("0x%x: the test interpreter does not know %s %v", mc.pc, in.op, a)
	}
	mc.pc = next
	return true
}

// expected is the frame list the shadow stack implies.
func (mc *machine) expected() []uint64 {
	out := []uint64{mc.pc}
	for i := len(mc.shadow) - 1; i >= 0; i-- {
		out = append(out, mc.shadow[i])
	}
	return out
}

const stackTop = 0x40000000

func newMachine(t *testing.T, path string) (*machine, *Image) {
	code, _ := disassemble(t, path)
	m := mem.New()
	img, err := Load(readFile(t, path), m)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Map(stackTop-0x20000, 0x20000, mem.PermR|mem.PermW); err != nil {
		t.Fatal(err)
	}
	mc := &machine{t: t, code: code, m: m, pc: img.Entry}
	for i := range mc.x {
		mc.x[i] = 0x5a5a0000 + uint64(i)*0x111 // garbage
	}
	mc.x[0], mc.x[1], mc.x[2], mc.x[8] = 0, 0, stackTop, 0 // the kernel's _start contract
	return mc, img
}

func hexList(v []uint64) string {
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%x", x)
	}
	return b.String()
}

func TestUnwindEveryInstruction(t *testing.T) {
	path := buildC(t, "chain.c")
	mc, img := newMachine(t, path)
	s := img.Symbols
	visited := map[uint64]bool{}
	maxDepth, steps := 0, 0
	for {
		steps++
		if steps > 100000 {
			t.Fatal("the program does not finish")
		}
		want := mc.expected()
		got := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 64)
		if !slices.Equal(got, want) {
			name, start, _ := s.FuncAt(mc.pc)
			t.Fatalf("at 0x%x (%s+0x%x: %s %v), ra=%x sp=%x s0=%x:\nUnwind = %s\nwant     %s",
				mc.pc, name, mc.pc-start, mc.code[mc.pc].op, mc.code[mc.pc].args, mc.x[1], mc.x[2], mc.x[8],
				hexList(got), hexList(want))
		}
		visited[mc.pc] = true
		maxDepth = max(maxDepth, len(want))
		if !mc.step() {
			break
		}
	}
	if maxDepth != 8 {
		t.Errorf("deepest stack had %d frames, want 8 (_start main vla big vsum f g leaf)", maxDepth)
	}
	if v := mc.x[10]; v != uint64(int64(int32(mc.x[10]))) || v == 0 {
		t.Errorf("exit status %d", v)
	}
	// Every instruction of every function but _start ran (and was checked).
	for _, f := range s.Functions() {
		if f.Name == "_start" {
			continue
		}
		for pc := f.Start; pc < f.End(); pc += 4 {
			if !visited[pc] {
				t.Errorf("%s+0x%x never executed", f.Name, pc-f.Start)
			}
		}
	}
	// Frames describe as call sites in the right functions.
	names := []string{}
	for _, fr := range s.DescribeStack(s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 0)) {
		names = append(names, fr.Func)
	}
	if !slices.Equal(names, []string{"_start"}) {
		t.Errorf("at exit: frames %v", names)
	}
}

// runTo runs the machine until pc is the first instruction of fn.
func runTo(t *testing.T, mc *machine, s *Symbols, fn string, nth int) {
	addr, _, ok := s.Lookup(fn)
	if !ok {
		t.Fatalf("no function %s", fn)
	}
	for seen := 0; ; {
		if mc.pc == addr {
			if seen++; seen == nth {
				return
			}
		}
		if !mc.step() {
			t.Fatalf("program ended before reaching %s", fn)
		}
	}
}

func TestUnwindFromLeaf(t *testing.T) {
	path := buildC(t, "chain.c")
	mc, img := newMachine(t, path)
	s := img.Symbols
	runTo(t, mc, s, "leaf", 1)
	var names []string
	frames := s.DescribeStack(s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 0))
	for _, fr := range frames {
		names = append(names, fr.Func)
		if fr.File != "chain.c" || fr.Line == 0 {
			t.Errorf("frame %v has no line", fr)
		}
	}
	if want := []string{"leaf", "g", "f", "vsum", "big", "vla", "main", "_start"}; !slices.Equal(names, want) {
		t.Errorf("frames %v, want %v", names, want)
	}
	for i := 1; i < len(frames); i++ {
		// Each call site is a jalr.
		if in := mc.code[frames[i].PC]; in.op != "jalr" {
			t.Errorf("frame %d at 0x%x is %s, not a call", i, frames[i].PC, in.op)
		}
	}
	pcs := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 0)

	// max limits the frames.
	if got := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 3); !slices.Equal(got, pcs[:3]) {
		t.Errorf("max 3: %s", hexList(got))
	}
	// A call through a null or data pointer: frame 0 is the bad pc, the
	// caller is ra.
	for _, bad := range []uint64{0, 0x10000, stackTop - 64} {
		want := append([]uint64{bad}, pcs[1:]...)
		if got := s.Unwind(bad, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 0); !slices.Equal(got, want) {
			t.Errorf("pc 0x%x: Unwind = %s, want %s", bad, hexList(got), hexList(want))
		}
	}
	// A failing read ends the walk after what registers alone give.
	noMem := func(uint64) (uint64, bool) { return 0, false }
	if got := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], noMem, 0); !slices.Equal(got, pcs[:2]) {
		t.Errorf("no memory: %s, want %s", hexList(got), hexList(pcs[:2]))
	}
}

// Corrupt frame records end the walk instead of looping or wandering.
func TestUnwindCorruptStack(t *testing.T) {
	path := buildC(t, "chain.c")
	mc, img := newMachine(t, path)
	s := img.Symbols
	runTo(t, mc, s, "leaf", 1)
	mc.step()
	mc.step()
	mc.step()
	mc.step() // leaf's prologue done: s0 is leaf's frame
	pcs := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 0)
	if len(pcs) != 8 {
		t.Fatalf("Unwind = %s", hexList(pcs))
	}
	// g's frame record is at g's s0 (the value leaf saved at its s0-16).
	gfp, _ := mc.m.Read64(mc.x[8] - 16)
	ffp, _ := mc.m.Read64(gfp - 16)

	// A cycle: g's saved s0 points back at g's own frame.
	mc.m.Write64(gfp-16, gfp)
	if got := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 0); !slices.Equal(got, pcs[:3]) {
		t.Errorf("cycle: %s, want %s", hexList(got), hexList(pcs[:3]))
	}
	// A saved s0 pointing down the stack.
	mc.m.Write64(gfp-16, mc.x[2]-64)
	if got := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 0); !slices.Equal(got, pcs[:3]) {
		t.Errorf("downward: %s, want %s", hexList(got), hexList(pcs[:3]))
	}
	// A saved s0 of 0.
	mc.m.Write64(gfp-16, 0)
	if got := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 0); !slices.Equal(got, pcs[:3]) {
		t.Errorf("zero: %s, want %s", hexList(got), hexList(pcs[:3]))
	}
	mc.m.Write64(gfp-16, ffp)
	// A return address that is not code, and one that is 0.
	for _, ra := range []uint64{0x10008, 0, 0x11001} {
		mc.m.Write64(gfp-8, ra)
		if got := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 0); !slices.Equal(got, pcs[:2]) {
			t.Errorf("ra 0x%x: %s, want %s", ra, hexList(got), hexList(pcs[:2]))
		}
	}
}

// Without symbols the unwinder falls back to the frame record (and the
// epilogue emulation): right everywhere except inside a prologue.
func TestUnwindStripped(t *testing.T) {
	path := buildC(t, "chain.c")
	stripped := buildC(t, "chain.c", "-Wl,--strip-all")
	mc, _ := newMachine(t, path)
	img, _ := loadPath(t, stripped)
	s := img.Symbols
	if len(s.Functions()) != 0 {
		t.Fatal("stripped binary has symbols")
	}
	// Same code, so the interpreter's disassembly applies.
	full, _ := loadPath(t, path)
	for pc := img.Entry &^ 4095; pc < img.End; pc += 4 {
		a, _ := s.insn(pc)
		b, _ := full.Symbols.insn(pc)
		if a != b {
			t.Fatalf("stripping changed the code at 0x%x", pc)
		}
	}
	_, funcs := disassemble(t, path)
	inPrologue := map[uint64]bool{}
	for _, insns := range funcs {
		for _, in := range insns {
			inPrologue[in.addr] = true
			if in.op == "addi" && in.args[0] == "s0" && in.args[1] == "sp" {
				break
			}
		}
	}
	checked := 0
	for {
		if !inPrologue[mc.pc] {
			want := mc.expected()
			got := s.Unwind(mc.pc, mc.x[1], mc.x[2], mc.x[8], mc.m.Read64, 64)
			if !slices.Equal(got, want) {
				t.Fatalf("at 0x%x: Unwind = %s, want %s", mc.pc, hexList(got), hexList(want))
			}
			checked++
		}
		if !mc.step() {
			break
		}
	}
	if checked < 100 {
		t.Errorf("only %d instructions checked", checked)
	}
}

// The frame layout clang emits (checked on llvm-objdump's text) is what
// analyze finds: addi sp,sp,-N; sd ra,M-8(sp); sd s0,M-16(sp); ...;
// addi s0,sp,M, so ra is at s0-8 and the caller's s0 at s0-16. M is N,
// except in a variadic function, whose register save area (64 bytes) is
// above s0.
func TestPrologueAnalysis(t *testing.T) {
	path := buildC(t, "chain.c")
	img, _ := loadPath(t, path)
	s := img.Symbols
	_, funcs := disassemble(t, path)
	for _, fn := range s.Functions() {
		insns := funcs[fn.Name]
		r := s.funcRange(fn.Start).rule
		if fn.Name == "asm_leaf" {
			if r.kind != kindFrameless {
				t.Errorf("asm_leaf: kind %d, want frameless", r.kind)
			}
			continue
		}
		if len(insns) < 4 || insns[0].op != "addi" || insns[0].args[0] != "sp" || insns[0].args[1] != "sp" {
			t.Fatalf("%s does not start with addi sp, sp, -N: %v", fn.Name, insns[:1])
		}
		n, _ := strconv.Atoi(insns[0].args[2])
		n = -n
		var m int
		var setFP uint64
		saved := map[string]string{}
		for _, in := range insns[1:] {
			if in.op == "sd" && (in.args[0] == "ra" || in.args[0] == "s0") {
				saved[in.args[0]] = in.args[1]
			}
			if in.op == "addi" && in.args[0] == "s0" && in.args[1] == "sp" {
				m, _ = strconv.Atoi(in.args[2])
				setFP = in.addr
				break
			}
		}
		wantM := n
		if fn.Name == "vsum" {
			wantM = n - 64
		}
		if setFP == 0 || m != wantM {
			t.Errorf("%s: addi s0, sp, %d at 0x%x; want %d", fn.Name, m, setFP, wantM)
		}
		if saved["ra"] != fmt.Sprintf("%d(sp)", m-8) || saved["s0"] != fmt.Sprintf("%d(sp)", m-16) {
			t.Errorf("%s: ra saved at %s, s0 at %s; want %d(sp), %d(sp)", fn.Name, saved["ra"], saved["s0"], m-8, m-16)
		}
		off := int64(m - n) // s0 - CFA
		if r.kind != kindFP || r.fpOff != off || r.raSlot != off-8 || r.fpSlot != off-16 || !r.raSaved || !r.fpSaved ||
			r.bodyStart != setFP+4 || len(r.steps) != 1 || r.steps[0] != (prologueStep{fn.Start, int64(-n)}) {
			t.Errorf("%s: analyze = %+v; want the frame record at s0-8/s0-16, s0 = CFA%+d, body at 0x%x",
				fn.Name, r, off, setFP+4)
		}
	}
}
