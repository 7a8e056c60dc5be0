package elfsym

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"strings"
	"testing"

	"landslide/emu/mem"
)

// FuzzLoad: Load never panics, fails only with a one-line *LoadError that
// leaves memory untouched, and a loaded image keeps its invariants.
//
//	go test -fuzz=FuzzLoad -parallel 1 ./emu/elfsym
func FuzzLoad(f *testing.F) {
	tiny, err := os.ReadFile("testdata/tiny.elf")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tiny)
	for _, c := range malformedCases() {
		f.Add(c.mutate(bytes.Clone(tiny)))
	}
	// A C++ program: mangled symbols, whose source names Load indexes.
	cxx, err := os.ReadFile("../../fixtures/bin/cxx/terminate.elf")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cxx)
	// Thread-local storage: a PT_TLS segment with .tdata and .tbss.
	tls, err := os.ReadFile("../../fixtures/bin/posix/tls.elf")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tls)
	f.Add(tlsAt(bytes.Clone(tiny), 4, 0x121e8, 4, 0x24, 4))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := mem.New()
		img, err := Load(data, m)
		if err != nil {
			var lerr *LoadError
			if !errors.As(err, &lerr) {
				t.Fatalf("error %v is %T, not *LoadError", err, err)
			}
			if lerr.Reason == "" || strings.ContainsAny(lerr.Reason, "\n\r") {
				t.Fatalf("error is not one line: %q", lerr.Reason)
			}
			if !strings.HasPrefix(lerr.Reason, "mapping ") && m.MappedPages() != 0 {
				t.Fatalf("failed load (%v) left %d pages mapped", err, m.MappedPages())
			}
			return
		}
		checkImage(t, img, m)
	})
}

// checkImage checks a loaded image's invariants and exercises its lookups.
func checkImage(t *testing.T, img *Image, m *mem.Memory) {
	if m.AnyMapped(0, NullGuard) {
		t.Fatal("a page below 0x10000 is mapped")
	}
	if p, ok := m.PermAt(img.Entry); !ok || p&mem.PermX == 0 {
		t.Fatalf("entry 0x%x: perm %v mapped %v", img.Entry, p, ok)
	}
	if img.Entry%4 != 0 || !img.Symbols.IsInstruction(img.Entry) {
		t.Fatalf("entry 0x%x is not an instruction", img.Entry)
	}
	if len(img.Segments) == 0 || img.End%mem.PageSize != 0 {
		t.Fatalf("segments %v, End 0x%x", img.Segments, img.End)
	}
	for _, d := range img.Directives {
		if d == "" || strings.ContainsFunc(d, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
			t.Fatalf("directive %q is empty or not printable ASCII", d)
		}
	}
	var total uint64
	for i, s := range img.Segments {
		total += s.Size
		if s.Addr < NullGuard || s.End() > img.End || s.End() > mem.Limit || s.FileSize > s.Size {
			t.Fatalf("segment %+v out of bounds (End 0x%x)", s, img.End)
		}
		if i > 0 && s.Addr < img.Segments[i-1].End() {
			t.Fatalf("segments overlap: %+v", img.Segments)
		}
		for _, a := range []uint64{s.Addr, s.End() - 1} {
			if p, ok := m.PermAt(a); !ok || p&s.Perm != s.Perm {
				t.Fatalf("0x%x in segment %+v: perm %v mapped %v", a, s, p, ok)
			}
		}
	}
	if total > MaxMemory {
		t.Fatalf("%d bytes of segments", total)
	}
	if tl := img.TLS; tl != nil {
		if tl.Size > MaxTLS || tl.FileSize > tl.Size || tl.Align == 0 || tl.Align&(tl.Align-1) != 0 || tl.Align > MaxTLSAlign {
			t.Fatalf("TLS %+v out of bounds", tl)
		}
		if tl.FileSize > 0 {
			b := make([]byte, tl.FileSize)
			if err := m.ReadBytes(tl.Addr, b); err != nil {
				t.Fatalf("TLS %+v: its image is not mapped: %v", tl, err)
			}
		}
	}
	if m.AnyMapped(img.End, mem.PageSize) {
		t.Fatal("a page at End is mapped")
	}
	s := img.Symbols
	fns := s.Functions()
	for i, fn := range fns {
		if i > 0 && fn.Start < fns[i-1].Start {
			t.Fatal("Functions() not sorted")
		}
		if i > 50 {
			break
		}
		if str := s.Describe(fn.Start, false).String(); !strings.Contains(str, fn.Name) && !strings.Contains(str, "in ") {
			t.Fatalf("Describe = %q", str)
		}
		s.Describe(fn.End(), true)
		if a, _, ok := s.Lookup(fn.Name); !ok {
			t.Fatalf("Lookup(%q) failed for a listed function (0x%x)", fn.Name, a)
		}
	}
	for _, pc := range []uint64{img.Entry, img.Entry + 4, img.Entry + 64} {
		s.LineAt(pc)
		s.ObjectAt(pc)
		for _, sp := range []uint64{0, img.End, img.Entry} {
			got := s.Unwind(pc, img.Entry+8, sp, sp+16, m.Read64, 16)
			if len(got) == 0 || got[0] != pc || len(got) > 16 {
				t.Fatalf("Unwind = %x", got)
			}
		}
	}
}

// debugSections are the sections FuzzDebugInfo corrupts.
var debugSections = []string{".symtab", ".strtab", ".debug_info", ".debug_abbrev", ".debug_line",
	".debug_str", ".debug_line_str", ".debug_str_offsets", ".debug_addr", ".debug_loclists"}

// FuzzDebugInfo overwrites part of one symbol or DWARF section of tiny.elf:
// the binary must still load (with warnings at most) and lookups must not
// panic.
//
//	go test -fuzz=FuzzDebugInfo -parallel 1 ./emu/elfsym
func FuzzDebugInfo(f *testing.F) {
	tiny, err := os.ReadFile("testdata/tiny.elf")
	if err != nil {
		f.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(tiny))
	if err != nil {
		f.Fatal(err)
	}
	type span struct{ off, size uint64 }
	var spans []span
	for _, name := range debugSections {
		if sec := ef.Section(name); sec != nil && sec.Type != elf.SHT_NOBITS {
			spans = append(spans, span{sec.Offset, sec.Size})
		}
	}
	if len(spans) < 8 {
		f.Fatalf("tiny.elf has only %d of the debug sections", len(spans))
	}
	for i := range spans {
		f.Add(uint8(i), uint16(0), []byte{0xff, 0xff, 0xff, 0xff})
		f.Add(uint8(i), uint16(8), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0x80})
	}
	f.Fuzz(func(t *testing.T, which uint8, at uint16, patch []byte) {
		sp := spans[int(which)%len(spans)]
		if sp.size == 0 {
			return
		}
		data := bytes.Clone(tiny)
		off := uint64(at) % sp.size
		n := min(uint64(len(patch)), sp.size-off)
		copy(data[sp.off+off:], patch[:n])
		m := mem.New()
		img, err := Load(data, m)
		if err != nil {
			t.Fatalf("corrupt debug information stopped the load: %v", err)
		}
		checkImage(t, img, m)
		s := img.Symbols
		for pc := img.Entry &^ 0xff; pc < img.Entry+0x100; pc += 4 {
			s.LineAt(pc)
			s.FuncAt(pc)
		}
	})
}

// FuzzUnwind: any registers and stack contents give a bounded list of
// frames whose outer entries are return addresses into code.
//
//	go test -fuzz=FuzzUnwind -parallel 1 ./emu/elfsym
func FuzzUnwind(f *testing.F) {
	tiny, err := os.ReadFile("testdata/tiny.elf")
	if err != nil {
		f.Fatal(err)
	}
	img, err := Parse(tiny)
	if err != nil {
		f.Fatal(err)
	}
	s := img.Symbols
	add, _, _ := s.Lookup("add")
	const base = 0x7fff0000
	frame := make([]byte, 64)
	le.PutUint64(frame[48:], base+64)        // saved s0
	le.PutUint64(frame[56:], img.Entry+0x20) // saved ra
	for _, fn := range s.Functions() {
		for pc := fn.Start; pc < fn.End(); pc += 4 {
			f.Add(pc, img.Entry+0x20, uint64(base+32), uint64(base+64), frame)
		}
	}
	f.Add(uint64(0), add+8, uint64(base), uint64(base+64), frame)
	f.Fuzz(func(t *testing.T, pc, ra, sp, fp uint64, stack []byte) {
		read := func(addr uint64) (uint64, bool) {
			if addr < base || addr-base+8 > uint64(len(stack)) {
				return 0, false
			}
			return le.Uint64(stack[addr-base:]), true
		}
		for _, max := range []int{1, 3, 0} {
			got := s.Unwind(pc, ra, sp, fp, read, max)
			limit := max
			if max <= 0 {
				limit = DefaultMaxFrames
			}
			if len(got) == 0 || got[0] != pc || len(got) > limit {
				t.Fatalf("max %d: Unwind = %x", max, got)
			}
			for _, r := range got[1:] {
				if r == 0 || !s.IsInstruction(r-4) {
					t.Fatalf("return address 0x%x is not after code: %x", r, got)
				}
			}
		}
	})
}

// FuzzDemangle: any symbol name demangles without panicking; a name that
// is not a C++ one ("_Z" prefix) stays as it is; a C++ name's source
// names are never empty.
func FuzzDemangle(f *testing.F) {
	for _, s := range []string{"_ZL3popv", "_ZL3top.0", "_ZNSt6thread4joinEv", "_ZdlPvm", "main", "_Z", "_ZZZ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		d := Demangle(name)
		if !strings.HasPrefix(name, "_Z") && d != name {
			t.Fatalf("Demangle(%q) = %q", name, d)
		}
		for _, n := range sourceNames(name) {
			if n == "" {
				t.Fatalf("sourceNames(%q) has an empty name", name)
			}
		}
	})
}
