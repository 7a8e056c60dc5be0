package cpu

import (
	"bytes"
	"debug/elf"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"

	"landslide/emu/mem"
	"landslide/fixtures"
)

// The block interpreter (Run) must stop where, and when, the reference
// interpreter (runRef: one instruction at a time, every check on every
// instruction) stops: same Stop, PC, Instret, registers, reservation and
// the same Tracker, Gate and Watcher calls, whatever the limits, the
// breakpoints set and cleared between Runs, the gates held and the watched
// pages. These tests run both in lockstep on the same programs.

// callLog records every Tracker, Gate and Watcher call, in order.
type callLog struct {
	calls []string
	n     int
	// holdEvery: the Gate holds back one call in holdEvery (0: never);
	// rejectEvery: the Watcher rejects one call in rejectEvery (0: never).
	holdEvery, rejectEvery int
	held                   bool
}

func (l *callLog) Access(addr uint64, size uint8, f AccessFlags, pc uint64) {
	l.calls = append(l.calls, fmt.Sprintf("access %x %d %05b @%x", addr, size, f, pc))
}

func (l *callLog) Fence(f AccessFlags, pc uint64) {
	l.calls = append(l.calls, fmt.Sprintf("fence %05b @%x", f, pc))
}

func (l *callLog) Before(addr uint64, size uint8, write, atomic bool, pc uint64) bool {
	l.n++
	ok := l.holdEvery == 0 || l.n%l.holdEvery != 0 || l.held
	// As the kernel's Gate does, let a held access through when it comes
	// back.
	l.held = !ok
	l.calls = append(l.calls, fmt.Sprintf("before %x %d %v %v @%x -> %v", addr, size, write, atomic, pc, ok))
	return ok
}

func (l *callLog) Check(addr uint64, size uint8, write bool, pc uint64) bool {
	l.n++
	ok := l.rejectEvery == 0 || l.n%l.rejectEvery != 0
	l.calls = append(l.calls, fmt.Sprintf("check %x %d %v @%x -> %v", addr, size, write, pc, ok))
	return ok
}

// loadELF maps an ELF image's segments (and a stack) into a new memory
// and returns a CPU at its entry point. watch marks the writable segments
// PermWatch.
func loadELF(t testing.TB, img []byte, watch bool) *CPU {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	m := mem.New()
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Memsz == 0 {
			continue
		}
		var perm mem.Perm
		if p.Flags&elf.PF_R != 0 {
			perm |= mem.PermR
		}
		if p.Flags&elf.PF_W != 0 {
			perm |= mem.PermW
			if watch {
				perm |= mem.PermWatch
			}
		}
		if p.Flags&elf.PF_X != 0 {
			perm |= mem.PermX
		}
		lo := p.Vaddr &^ mem.PageMask
		hi := (p.Vaddr + p.Memsz + mem.PageMask) &^ mem.PageMask
		if err := m.Map(lo, hi-lo, perm); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, p.Filesz)
		if n, err := p.ReadAt(data, 0); n < len(data) {
			t.Fatal(err)
		}
		if err := m.WriteBytes(p.Vaddr, data); err != nil {
			t.Fatal(err)
		}
	}
	const stackTop, stackSize = 0x7fff0000, 256 << 10
	if err := m.Map(stackTop-stackSize, stackSize, mem.PermR|mem.PermW); err != nil {
		t.Fatal(err)
	}
	c := New(m)
	c.PC = f.Entry
	c.X[2] = stackTop - 64
	return c
}

// textRange returns the bounds of the ELF image's executable segments.
func textRange(t testing.TB, img []byte) (lo, hi uint64) {
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	lo = ^uint64(0)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			lo, hi = min(lo, p.Vaddr), max(hi, p.Vaddr+p.Memsz)
		}
	}
	return lo &^ 3, hi &^ 3
}

type lockstepMode struct {
	name                   string
	track, watch           bool
	holdEvery, rejectEvery int
}

var lockstepModes = []lockstepMode{
	{name: "plain"},
	{name: "track", track: true},
	{name: "gate", track: true, holdEvery: 7},
	{name: "watch", watch: true, rejectEvery: 997},
	{name: "all", track: true, watch: true, holdEvery: 5, rejectEvery: 4001},
}

// lockstep runs the program in both interpreters, with limits, breakpoints
// and syscalls drawn from seed, comparing them after every Run, until it
// exits, traps or has run budget instructions.
func lockstep(t *testing.T, img []byte, mode lockstepMode, seed int64, budget uint64) {
	t.Helper()
	lo, hi := textRange(t, img)
	cpus := [2]*CPU{loadELF(t, img, mode.watch), loadELF(t, img, mode.watch)}
	logs := [2]*callLog{}
	for i, c := range cpus {
		logs[i] = &callLog{holdEvery: mode.holdEvery, rejectEvery: mode.rejectEvery}
		c.Watcher = logs[i]
		if mode.track {
			c.Tracker = logs[i]
		}
		if mode.holdEvery > 0 {
			c.Gate = logs[i]
		}
	}
	rng := rand.New(rand.NewSource(seed))
	var bps []uint64
	for round := 0; cpus[0].Instret < budget; round++ {
		// Breakpoints, set and cleared between Runs on both.
		switch r := rng.Intn(10); {
		case r < 2 && hi > lo:
			pc := lo + uint64(rng.Int63n(int64(hi-lo)))&^3
			for _, c := range cpus {
				c.SetBreakpoint(pc)
			}
			bps = append(bps, pc)
		case r < 3 && len(bps) > 0:
			j := rng.Intn(len(bps))
			for _, c := range cpus {
				c.ClearBreakpoint(bps[j])
			}
			bps = append(bps[:j], bps[j+1:]...)
		case r < 4:
			// A breakpoint right ahead: on the next few instructions.
			pc := cpus[0].PC + 4*uint64(rng.Intn(6))
			for _, c := range cpus {
				c.SetBreakpoint(pc)
			}
			bps = append(bps, pc)
		}
		var limit uint64
		switch r := rng.Intn(10); {
		case r < 3:
			limit = uint64(rng.Intn(4))
		case r < 7:
			limit = uint64(rng.Intn(64))
		default:
			limit = uint64(rng.Intn(20000))
		}
		var stops [2]Stop
		stops[0] = cpus[0].runRef(limit)
		stops[1] = cpus[1].Run(limit)
		where := fmt.Sprintf("%s seed %d round %d (Run(%d) from instret %d)", mode.name, seed, round, limit, cpus[0].Instret)
		compareCPUs(t, where, cpus, stops, logs)
		if t.Failed() {
			return
		}
		s := stops[0]
		switch s.Reason {
		case StopLimit, StopGate:
		case StopBreakpoint:
			if rng.Intn(4) > 0 {
				for _, c := range cpus {
					c.ResumeFromBreakpoint()
				}
			} else {
				// Take the breakpoint away instead.
				for _, c := range cpus {
					c.ClearBreakpoint(s.PC)
				}
			}
		case StopEcall:
			for _, c := range cpus {
				switch c.X[17] {
				case 93, 94: // exit, exit_group
					return
				case 64: // write
				default:
					c.X[10] = ^uint64(37) // -ENOSYS
				}
				c.PC += 4
			}
		default:
			return // a trap ends the program
		}
	}
}

func compareCPUs(t *testing.T, where string, cpus [2]*CPU, stops [2]Stop, logs [2]*callLog) {
	t.Helper()
	a, b := stops[0], stops[1]
	// Faults are pointers: compare what they point at.
	if (a.Fault == nil) != (b.Fault == nil) || a.Fault != nil && *a.Fault != *b.Fault {
		t.Errorf("%s: fault %v, reference %v", where, b.Fault, a.Fault)
	}
	a.Fault, b.Fault = nil, nil
	if a != b {
		t.Errorf("%s: stop %+v, reference %+v", where, b, a)
	}
	r, c := cpus[0], cpus[1]
	if r.PC != c.PC || r.Instret != c.Instret {
		t.Errorf("%s: pc %x instret %d, reference pc %x instret %d", where, c.PC, c.Instret, r.PC, r.Instret)
	}
	if r.X != c.X {
		t.Errorf("%s: registers\n%x\nreference\n%x", where, c.X, r.X)
	}
	if r.resValid != c.resValid || r.resAddr != c.resAddr || r.resVal != c.resVal || r.resume != c.resume {
		t.Errorf("%s: reservation or resume differ", where)
	}
	if !reflect.DeepEqual(logs[0].calls, logs[1].calls) {
		t.Errorf("%s: calls differ:\n%s\nreference:\n%s", where, strings.Join(logs[1].calls, "\n"), strings.Join(logs[0].calls, "\n"))
	}
	logs[0].calls, logs[1].calls = logs[0].calls[:0], logs[1].calls[:0]
}

// TestRunMatchesReference runs the ISA fixtures and the benchmark loop in
// both interpreters, in every mode, under random limits and breakpoints.
func TestRunMatchesReference(t *testing.T) {
	var fs []fixtures.Fixture
	for _, f := range fixtures.All() {
		if strings.HasPrefix(f.Name, "isa/") || f.Name == "bench/loop" {
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		t.Fatal("no fixtures")
	}
	seeds := 3
	budget := uint64(400000)
	if testing.Short() {
		seeds, budget = 1, 100000
	}
	for _, f := range fs {
		img, err := os.ReadFile(f.Path())
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range lockstepModes {
			for seed := int64(1); seed <= int64(seeds); seed++ {
				lockstep(t, img, mode, seed, budget)
				if t.Failed() {
					t.Fatalf("%s: differs from the reference", f.Name)
				}
			}
		}
	}
}

// TestRunStepwise: Run(1) after Run(1) is the reference interpreter too,
// and so is one long Run.
func TestRunStepwise(t *testing.T) {
	f, _ := fixtures.Lookup("bench/loop")
	img, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	ref := loadELF(t, img, false)
	one := loadELF(t, img, false)
	long := loadELF(t, img, false)
	const total = 20000
	sr := ref.runRef(total)
	for i := 0; i < total; i++ {
		if s := one.Run(1); s.Reason != StopLimit {
			t.Fatalf("step %d: %v", i, s.Reason)
		}
	}
	sl := long.Run(total)
	if sr != sl || sr.Reason != StopLimit {
		t.Fatalf("stop %+v, reference %+v", sl, sr)
	}
	for _, c := range []*CPU{one, long} {
		if c.PC != ref.PC || c.Instret != ref.Instret || c.X != ref.X {
			t.Fatalf("pc %x instret %d, reference pc %x instret %d", c.PC, c.Instret, ref.PC, ref.Instret)
		}
	}
}

// TestWritableCode: code on a writable page runs one instruction at a
// time and sees its own stores, as before.
func TestWritableCode(t *testing.T) {
	const code = 0x10000
	prog := []uint32{
		0x00000513, // 0:  li a0, 0
		0x00150513, // 4:  addi a0, a0, 1
		0x0085a023, // 8:  sw s0, 0(a1): rewrites the instruction at 16
		0x00000013, // 12: nop
		0x00150513, // 16: addi a0, a0, 1 (becomes addi a0, a0, 100)
		0x00150513, // 20: addi a0, a0, 1
		0xfe0006e3, // 24: beq zero, zero, -20 (back to 4: loop for ever)
	}
	var cpus [2]*CPU
	for i := range cpus {
		m := mem.New()
		if err := m.Map(code, mem.PageSize, mem.PermR|mem.PermW|mem.PermX); err != nil {
			t.Fatal(err)
		}
		for j, w := range prog {
			m.Write32(code+uint64(4*j), w)
		}
		c := New(m)
		c.PC = code
		c.X[8] = 0x06450513 // addi a0, a0, 100
		c.X[11] = code + 16
		cpus[i] = c
	}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		limit := uint64(rng.Intn(10))
		if rng.Intn(5) == 0 {
			pc := code + 4*uint64(rng.Intn(len(prog)))
			cpus[0].SetBreakpoint(pc)
			cpus[1].SetBreakpoint(pc)
		}
		s0, s1 := cpus[0].runRef(limit), cpus[1].Run(limit)
		if s0 != s1 || cpus[0].PC != cpus[1].PC || cpus[0].Instret != cpus[1].Instret || cpus[0].X != cpus[1].X {
			t.Fatalf("round %d: stop %+v pc %x instret %d, reference %+v pc %x instret %d", round, s1, cpus[1].PC, cpus[1].Instret, s0, cpus[0].PC, cpus[0].Instret)
		}
		if s0.Reason == StopBreakpoint {
			cpus[0].ResumeFromBreakpoint()
			cpus[1].ResumeFromBreakpoint()
		}
	}
	if cpus[1].X[10] < 100 {
		t.Fatalf("a0 = %d: the rewritten instruction never ran", cpus[1].X[10])
	}
}
