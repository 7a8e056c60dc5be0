package elfsym

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"landslide/emu/mem"
	"landslide/fixtures"
)

func loadPath(t testing.TB, path string) (*Image, *mem.Memory) {
	t.Helper()
	m := mem.New()
	img, err := Load(readFile(t, path), m)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	if len(img.Warnings) != 0 {
		t.Errorf("warnings: %q", img.Warnings)
	}
	return img, m
}

type objdumpSym struct {
	name       string
	addr, size uint64
	global     bool
}

// objdumpSymbols parses llvm-objdump -t: function (F) and object (O) symbols.
func objdumpSymbols(t *testing.T, path string) (funcs, objects []objdumpSym) {
	re := regexp.MustCompile(`^([0-9a-f]{16}) (.{7}) (\S+)\s+([0-9a-f]{16}) (\S+)$`)
	for _, line := range strings.Split(run(t, "llvm-objdump", "-t", path), "\n") {
		mm := re.FindStringSubmatch(line)
		if mm == nil {
			continue
		}
		addr, _ := strconv.ParseUint(mm[1], 16, 64)
		size, _ := strconv.ParseUint(mm[4], 16, 64)
		s := objdumpSym{mm[5], addr, size, mm[2][0] == 'g'}
		switch mm[2][6] {
		case 'F':
			funcs = append(funcs, s)
		case 'O':
			objects = append(objects, s)
		}
	}
	return funcs, objects
}

// The symbol table as llvm-objdump sees it.
func TestSymbolsMatchObjdump(t *testing.T) {
	path := buildC(t, "chain.c")
	img, _ := loadPath(t, path)
	s := img.Symbols
	funcs, objects := objdumpSymbols(t, path)
	if len(funcs) < 8 || len(objects) < 3 {
		t.Fatalf("llvm-objdump found %d functions and %d objects; the test program has more", len(funcs), len(objects))
	}
	for _, o := range append(append([]objdumpSym{}, funcs...), objects...) {
		addr, size, ok := s.Lookup(o.name)
		if !ok || addr != o.addr || size != o.size {
			t.Errorf("Lookup(%q) = 0x%x, %d, %v; llvm-objdump says 0x%x, %d", o.name, addr, size, ok, o.addr, o.size)
		}
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].addr < funcs[j].addr })
	got := s.Functions()
	if len(got) != len(funcs) {
		t.Fatalf("Functions() has %d entries, llvm-objdump %d: %+v", len(got), len(funcs), got)
	}
	for i, f := range funcs {
		if got[i] != (Func{f.name, f.addr, f.size}) {
			t.Errorf("Functions()[%d] = %+v, want %+v", i, got[i], f)
		}
		for _, pc := range []uint64{f.addr, f.addr + 4, f.addr + f.size - 4, f.addr + f.size - 1} {
			if name, start, ok := s.FuncAt(pc); !ok || name != f.name || start != f.addr {
				t.Errorf("FuncAt(0x%x) = %q 0x%x %v, want %s at 0x%x", pc, name, start, ok, f.name, f.addr)
			}
		}
		if !s.IsInstruction(f.addr) || s.IsInstruction(f.addr+1) {
			t.Errorf("IsInstruction wrong around %s", f.name)
		}
	}
	if _, _, ok := s.FuncAt(funcs[0].addr - 4); ok {
		t.Error("FuncAt found a function before the first one")
	}
	for _, o := range objects {
		if name, start, ok := s.ObjectAt(o.addr + o.size - 1); !ok || name != o.name || start != o.addr {
			t.Errorf("ObjectAt(end of %s) = %q 0x%x %v", o.name, name, start, ok)
		}
		if s.IsInstruction(o.addr) {
			t.Errorf("IsInstruction(%s) is true for data", o.name)
		}
	}
	if _, _, ok := s.Lookup("no_such_symbol"); ok {
		t.Error("Lookup found a symbol that does not exist")
	}
}

// LineAt and FuncAt agree with llvm-addr2line on every instruction, for
// DWARF 5 (clang's default) and DWARF 4.
func TestLinesMatchAddr2line(t *testing.T) {
	for _, dwarf := range []string{"-gdwarf-5", "-gdwarf-4"} {
		t.Run(dwarf, func(t *testing.T) { testLinesMatchAddr2line(t, buildC(t, "chain.c", dwarf)) })
	}
}

// Sources in several directories and an inline function from a header:
// file names are the paths DWARF records, relative to the build directory.
func TestLinesMultiFile(t *testing.T) {
	path := buildC(t, "multi/main.c", "multi/lib/helper.c", "-Imulti/include")
	files := testLinesMatchAddr2line(t, path)
	for _, want := range []string{"multi/main.c", "multi/lib/helper.c", "multi/include/twice.h"} {
		if !files[want] {
			t.Errorf("no instruction attributed to %s (files: %v)", want, files)
		}
	}
}

func testLinesMatchAddr2line(t *testing.T, path string) (files map[string]bool) {
	files = map[string]bool{}
	img, _ := loadPath(t, path)
	s := img.Symbols
	if !s.HasLines() {
		t.Fatal("no line information loaded")
	}
	var addrs []uint64
	args := []string{"-f", "-e", path}
	for _, f := range s.Functions() {
		for pc := f.Start; pc < f.End(); pc += 4 {
			addrs = append(addrs, pc)
			args = append(args, fmt.Sprintf("0x%x", pc))
		}
	}
	out := strings.Split(strings.TrimSpace(run(t, "llvm-addr2line", args...)), "\n")
	if len(out) != 2*len(addrs) {
		t.Fatalf("llvm-addr2line printed %d lines for %d addresses", len(out), len(addrs))
	}
	withLine, inlined := 0, 0
	for i, pc := range addrs {
		fn, loc := out[2*i], out[2*i+1]
		colon := strings.LastIndex(loc, ":")
		wantFile := cleanFile(loc[:colon])
		wantLine, err := strconv.Atoi(loc[colon+1:])
		if err != nil {
			t.Fatalf("llvm-addr2line output %q", loc)
		}
		// addr2line names the innermost inlined function, which has no
		// symbol; FuncAt names the symbol, so compare only outside inlines.
		if _, _, sym := s.Lookup(fn); !sym {
			inlined++
		} else if name, _, _ := s.FuncAt(pc); name != fn {
			t.Errorf("FuncAt(0x%x) = %q, llvm-addr2line says %q", pc, name, fn)
		}
		file, line, ok := s.LineAt(pc)
		switch {
		case wantLine == 0 || wantFile == "??":
			if ok {
				t.Errorf("LineAt(0x%x) = %s:%d, llvm-addr2line says %s (no line)", pc, file, line, loc)
			}
		case !ok || file != wantFile || line != wantLine:
			t.Errorf("LineAt(0x%x) = %s:%d %v, llvm-addr2line says %s:%d", pc, file, line, ok, wantFile, wantLine)
		default:
			withLine++
			files[file] = true
		}
	}
	if inlined > len(addrs)/2 {
		t.Errorf("%d of %d instructions are in inlined functions", inlined, len(addrs))
	}
	if withLine < len(addrs)*3/4 {
		t.Errorf("only %d of %d instructions have a line", withLine, len(addrs))
	}
	if _, _, ok := s.LineAt(0x10000); ok {
		t.Error("LineAt found a line in the ELF header page")
	}
	return files
}

// Describe and Frame.String on a call site and on an unknown address.
func TestDescribe(t *testing.T) {
	path := buildC(t, "chain.c")
	img, _ := loadPath(t, path)
	s := img.Symbols
	g, _, _ := s.Lookup("g")
	leaf, _, _ := s.Lookup("leaf")
	// The call to leaf in g: auipc ra, 0; jalr imm(ra). Find the jalr.
	var jalr uint64
	for pc := g; ; pc += 4 {
		in, _ := s.insn(pc)
		if opcode(in) == opJALR && rd(in) == regRA {
			jalr = pc
			break
		}
	}
	loc := strings.TrimSpace(run(t, "llvm-addr2line", "-e", path, fmt.Sprintf("0x%x", jalr)))
	wantLine := loc[strings.LastIndex(loc, ":")+1:]
	fr := s.Describe(jalr+4, true)
	want := Frame{PC: jalr, Func: "g", Offset: jalr - g, File: "chain.c", Line: fr.Line}
	if fr != want || strconv.Itoa(fr.Line) != wantLine {
		t.Errorf("Describe(ret, true) = %+v, want %+v at line %s", fr, want, wantLine)
	}
	if got, want := fr.String(), fmt.Sprintf("0x%08x in g (chain.c:%s)", jalr, wantLine); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if fr := s.Describe(leaf, false); fr.PC != leaf || fr.Func != "leaf" || fr.Offset != 0 {
		t.Errorf("Describe(leaf, false) = %+v", fr)
	}
	if got := s.Describe(0x10004, false).String(); got != "0x00010004 in <unknown>" {
		t.Errorf("Describe(header) = %q", got)
	}
	frames := s.DescribeStack([]uint64{leaf, jalr + 4})
	if frames[0].PC != leaf || frames[1].PC != jalr {
		t.Errorf("DescribeStack = %+v", frames)
	}
}

// Without -g: symbols but no lines, and no warning.
func TestNoDWARF(t *testing.T) {
	path := buildC(t, "chain.c", "-g0")
	img, _ := loadPath(t, path)
	s := img.Symbols
	if s.HasLines() {
		t.Error("lines without DWARF")
	}
	addr, _, ok := s.Lookup("leaf")
	if !ok {
		t.Fatal("no symbol leaf")
	}
	if fr := s.Describe(addr+8, false); fr.Func != "leaf" || fr.Offset != 8 || fr.File != "" {
		t.Errorf("Describe = %+v", fr)
	} else if got := fr.String(); got != fmt.Sprintf("0x%08x in leaf", addr+8) {
		t.Errorf("String() = %q", got)
	}
}

// TestDemangle: C++ symbols read as their source writes them in
// reports; C names, and names that are not valid manglings, stay as
// they are.
func TestDemangle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"_ZL3popv", "pop()"},
		{"_ZL3top.0", "top.0"},
		{"_ZNSt6thread4joinEv", "std::thread::join()"},
		{"_Z14thread_routinePv", "thread_routine(void*)"},
		{"mutex_lock", "mutex_lock"},
		{"_Zbogus", "_Zbogus"},
		{"", ""},
	} {
		if got := Demangle(c.in); got != c.want {
			t.Errorf("Demangle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	f := Frame{PC: 0x153c0, Func: "_ZL3popv", File: "treiber.cc", Line: 28}
	if got, want := f.String(), "0x000153c0 in pop() (treiber.cc:28)"; got != want {
		t.Errorf("Frame.String() = %q, want %q", got, want)
	}
}

// TestLookupSourceNames: a C++ program's functions and globals are found
// by their names in the source (with or without parameters), a name two
// symbols share (operator delete's two overloads) only with its
// parameters, and C names as they are.
func TestLookupSourceNames(t *testing.T) {
	_, img, err := fixtures.Load("cxx/treiber_lost")
	if err != nil {
		t.Fatal(err)
	}
	im, err := Load(img, mem.New())
	if err != nil {
		t.Fatal(err)
	}
	s := im.Symbols
	for _, c := range []struct{ name, symbol string }{
		{"push", "_ZL4pushi"},
		{"push(int)", "_ZL4pushi"},
		{"top", "_ZL3top.0"},
		{"top.0", "_ZL3top.0"},
		{"operator delete(void*)", "_ZdlPv"},
		{"operator delete(void*, unsigned long)", "_ZdlPvm"},
		{"malloc", "malloc"},
	} {
		got, _, ok := s.Lookup(c.name)
		want, _, wok := s.Lookup(c.symbol)
		if !ok || !wok || got != want {
			t.Errorf("Lookup(%q) = %#x %v, want %s's %#x (%v)", c.name, got, ok, c.symbol, want, wok)
		}
	}
	if addr, _, ok := s.Lookup("operator delete"); ok {
		t.Errorf("Lookup(\"operator delete\") = %#x: one of two overloads", addr)
	}
}
