package elfsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"landslide/emu/mem"
)

var le = binary.LittleEndian

// Offsets of ELF64 header and program header fields.
const (
	ehType   = 16
	ehMach   = 18
	ehEntry  = 24
	ehShoff  = 40
	ehPhesz  = 54
	phType   = 0
	phOff    = 8
	phVaddr  = 16
	phFilesz = 32
	phMemsz  = 40
	phAlign  = 48
)

func tinyELF(t testing.TB) []byte {
	t.Helper()
	return readFile(t, "testdata/tiny.elf")
}

// phdr returns the offset of program header i.
func phdr(b []byte, i int) int {
	return int(le.Uint64(b[32:])) + i*int(le.Uint16(b[ehPhesz:]))
}

// loads returns the indices of the PT_LOAD program headers in file order.
func loads(b []byte) []int {
	var out []int
	for i := 0; i < int(le.Uint16(b[56:])); i++ {
		if le.Uint32(b[phdr(b, i):]) == uint32(elf.PT_LOAD) {
			out = append(out, i)
		}
	}
	return out
}

func set64(b []byte, off int, v uint64) { le.PutUint64(b[off:], v) }

// tlsAt makes program header i of tiny.elf a PT_TLS segment.
func tlsAt(b []byte, i int, vaddr, filesz, memsz, align uint64) []byte {
	h := phdr(b, i)
	le.PutUint32(b[h+phType:], uint32(elf.PT_TLS))
	set64(b, h+phVaddr, vaddr)
	set64(b, h+phFilesz, filesz)
	set64(b, h+phMemsz, memsz)
	set64(b, h+phAlign, align)
	return b
}

// malformed is a broken variant of tiny.elf and the error it must give.
type malformed struct {
	name   string
	mutate func(b []byte) []byte
	want   string
}

// malformedCases derive from tiny.elf, whose PT_LOADs are, in order: R
// (headers, at 0x10000), RX (text) and RW (data + bss).
func malformedCases() []malformed {
	seg := func(b []byte, k int) int { return phdr(b, loads(b)[k]) }
	return []malformed{
		{"empty", func(b []byte) []byte { return nil }, "not an ELF file"},
		{"garbage", func(b []byte) []byte { return []byte("#!/bin/sh\necho this is not an ELF file at all\n") }, "not an ELF file"},
		{"truncated header", func(b []byte) []byte { return b[:40] }, "truncated: ELF header"},
		{"32-bit", func(b []byte) []byte { b[elf.EI_CLASS] = byte(elf.ELFCLASS32); return b }, "ELF is 32-bit; want ELF64 RISC-V"},
		{"bad class", func(b []byte) []byte { b[elf.EI_CLASS] = 7; return b }, "not an ELF file (invalid class 7)"},
		{"big-endian", func(b []byte) []byte { b[elf.EI_DATA] = byte(elf.ELFDATA2MSB); return b }, "ELF is big-endian"},
		{"x86-64", func(b []byte) []byte { le.PutUint16(b[ehMach:], uint16(elf.EM_X86_64)); return b },
			"ELF machine is x86-64; want RISC-V (EM_RISCV)"},
		{"aarch64", func(b []byte) []byte { le.PutUint16(b[ehMach:], uint16(elf.EM_AARCH64)); return b },
			"ELF machine is AArch64; want RISC-V (EM_RISCV)"},
		{"PIE", func(b []byte) []byte { le.PutUint16(b[ehType:], uint16(elf.ET_DYN)); return b },
			"not an executable (ET_DYN/PIE not supported"},
		{"object file", func(b []byte) []byte { le.PutUint16(b[ehType:], uint16(elf.ET_REL)); return b },
			"not an executable (ET_REL"},
		{"truncated file", func(b []byte) []byte { return b[:le.Uint64(b[seg(b, 1)+phOff:])+16] },
			"truncated: segment 2 extends past end of file"},
		{"segment past EOF", func(b []byte) []byte { set64(b, seg(b, 1)+phOff, uint64(len(b))-8); return b },
			"truncated: segment 2 extends past end of file"},
		{"program headers past EOF", func(b []byte) []byte { set64(b, 32, uint64(len(b))-8); return b },
			"truncated: program headers extend past end of file"},
		{"bad phentsize", func(b []byte) []byte { le.PutUint16(b[ehPhesz:], 32); return b },
			"program header entry size is 32, want 56"},
		{"filesz > memsz", func(b []byte) []byte {
			s := seg(b, 2)
			set64(b, s+phMemsz, le.Uint64(b[s+phFilesz:])-1)
			return b
		}, "segment 3: file size 0x4 exceeds memory size 0x3"},
		{"overlapping segments", func(b []byte) []byte {
			set64(b, seg(b, 2)+phVaddr, le.Uint64(b[seg(b, 1)+phVaddr:])+0x10)
			return b
		}, "segment at 0x11168 overlaps segment at 0x11158"},
		{"segment in the null page", func(b []byte) []byte { set64(b, seg(b, 0)+phVaddr, 0x1000); return b },
			"segment 1 at 0x1000 is below 0x10000 (the null guard region)"},
		{"segment at 0", func(b []byte) []byte { set64(b, seg(b, 0)+phVaddr, 0); return b },
			"below 0x10000 (the null guard region)"},
		{"huge memsz", func(b []byte) []byte { set64(b, seg(b, 2)+phMemsz, 2<<30); return b }, "too large"},
		{"memsz sum too large", func(b []byte) []byte {
			set64(b, seg(b, 1)+phMemsz, 600<<20)
			set64(b, seg(b, 2)+phVaddr, 0x40000000)
			set64(b, seg(b, 2)+phMemsz, 600<<20)
			return b
		}, "too large"},
		{"beyond the address limit", func(b []byte) []byte { set64(b, seg(b, 2)+phVaddr, mem.Limit); return b },
			"beyond the guest address limit"},
		{"wrapping segment", func(b []byte) []byte { set64(b, seg(b, 2)+phVaddr, ^uint64(0)-0x10); return b },
			"beyond the guest address limit"},
		{"entry in data", func(b []byte) []byte { set64(b, ehEntry, 0x10000); return b },
			"entry point 0x10000 is not in an executable segment"},
		{"entry unmapped", func(b []byte) []byte { set64(b, ehEntry, 0); return b },
			"entry point 0x0 is not in an executable segment"},
		{"entry misaligned", func(b []byte) []byte { set64(b, ehEntry, le.Uint64(b[seg(b, 1)+phVaddr:])+2); return b },
			"is not 4-byte aligned"},
		{"no loadable segments", func(b []byte) []byte {
			for _, i := range loads(b) {
				le.PutUint32(b[phdr(b, i):], uint32(elf.PT_NULL))
			}
			return b
		}, "no loadable segments"},
		{"dynamic", func(b []byte) []byte {
			le.PutUint32(b[phdr(b, 4):], uint32(elf.PT_INTERP))
			return b
		}, "PT_INTERP"},
		{"TLS too large", func(b []byte) []byte { return tlsAt(b, 4, 0x121e8, 0, MaxTLS+1, 8) },
			"thread-local storage of 65537 bytes: each thread's block may take at most 64 KiB"},
		{"TLS alignment", func(b []byte) []byte { return tlsAt(b, 4, 0x121e8, 4, 8, 3) },
			"alignment 0x3 is not a power of two"},
		{"TLS alignment over a page", func(b []byte) []byte { return tlsAt(b, 4, 0x121e8, 4, 8, 0x2000) },
			"alignment 0x2000 is not a power of two up to 0x1000"},
		{"TLS filesz > memsz", func(b []byte) []byte { return tlsAt(b, 4, 0x121e8, 8, 4, 4) },
			"thread-local storage (segment 4): file size 0x8 exceeds memory size 0x4"},
		{"TLS image not loaded", func(b []byte) []byte { return tlsAt(b, 4, 0x121e8, 8, 8, 4) },
			"thread-local storage's initial image at 0x121e8+0x8 is not in a loaded segment's file bytes"},
		{"two TLS segments", func(b []byte) []byte { return tlsAt(tlsAt(b, 4, 0x121e8, 4, 8, 4), 0, 0x121e8, 4, 8, 4) },
			"segment 4: a second PT_TLS segment"},
		{"corrupt section headers", func(b []byte) []byte { set64(b, ehShoff, 1<<40); return b }, "truncated: section headers"},
		{"bad section string index", func(b []byte) []byte { le.PutUint16(b[62:], 0xfff0); return b }, "malformed ELF: "},
	}
}

func TestLoadErrors(t *testing.T) {
	for _, c := range malformedCases() {
		t.Run(c.name, func(t *testing.T) {
			data := c.mutate(tinyELF(t))
			m := mem.New()
			img, err := Load(data, m)
			if err == nil {
				t.Fatalf("Load succeeded (entry 0x%x, %d segments); want error %q", img.Entry, len(img.Segments), c.want)
			}
			var lerr *LoadError
			if !errors.As(err, &lerr) {
				t.Fatalf("error %v is %T, want *LoadError", err, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error is not one line: %q", err)
			}
			if n := m.MappedPages(); n != 0 {
				t.Errorf("a rejected binary left %d pages mapped", n)
			}
		})
	}
}

// TestLoadTLS: a PT_TLS segment whose image lies in a loaded segment's
// file bytes is the image's TLS template; an empty one (sdk/linker.ld's
// in a program without thread-local variables) is none.
func TestLoadTLS(t *testing.T) {
	for _, c := range []struct {
		name                        string
		vaddr, filesz, memsz, align uint64
		want                        *TLS
	}{
		{"data's bytes", 0x121e8, 4, 0x24, 4, &TLS{Addr: 0x121e8, FileSize: 4, Size: 0x24, Align: 4}},
		{"bss only", 0x121ec, 0, 0x10, 0, &TLS{Addr: 0x121ec, Size: 0x10, Align: 1}},
		{"empty", 0, 0, 0, 0, nil},
	} {
		img, err := Load(tlsAt(tinyELF(t), 4, c.vaddr, c.filesz, c.memsz, c.align), mem.New())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (img.TLS == nil) != (c.want == nil) || img.TLS != nil && *img.TLS != *c.want {
			t.Errorf("%s: TLS %+v, want %+v", c.name, img.TLS, c.want)
		}
	}
}

func TestLoadTiny(t *testing.T) {
	data := tinyELF(t)
	m := mem.New()
	img, err := Load(data, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Warnings) != 0 {
		t.Errorf("warnings: %q", img.Warnings)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if img.Entry != f.Entry {
		t.Errorf("Entry = 0x%x, want 0x%x", img.Entry, f.Entry)
	}
	if addr, _, ok := img.Symbols.Lookup("_start"); !ok || addr != img.Entry {
		t.Errorf("_start = 0x%x %v, want the entry point", addr, ok)
	}
	var want []Segment
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		var perm mem.Perm
		if p.Flags&elf.PF_R != 0 {
			perm |= mem.PermR
		}
		if p.Flags&elf.PF_W != 0 {
			perm |= mem.PermW
		}
		if p.Flags&elf.PF_X != 0 {
			perm |= mem.PermX
		}
		want = append(want, Segment{p.Vaddr, p.Memsz, p.Filesz, perm})
		// Every byte of the segment: file bytes, then zeros.
		got := make([]byte, p.Memsz)
		if err := m.ReadBytes(p.Vaddr, got); err != nil {
			t.Fatalf("segment 0x%x: %v", p.Vaddr, err)
		}
		exp := make([]byte, p.Memsz)
		copy(exp, data[p.Off:p.Off+p.Filesz])
		if !bytes.Equal(got, exp) {
			t.Errorf("segment 0x%x: contents differ from the file (+ zero fill)", p.Vaddr)
		}
		for a := p.Vaddr &^ 4095; a < p.Vaddr+p.Memsz; a += 4096 {
			if got, ok := m.PermAt(a); !ok || got != perm {
				t.Errorf("page 0x%x: perm %v %v, want %v", a, got, ok, perm)
			}
		}
	}
	if len(img.Segments) != len(want) {
		t.Fatalf("Segments = %+v, want %+v", img.Segments, want)
	}
	var end uint64
	for i := range want {
		if img.Segments[i] != want[i] {
			t.Errorf("segment %d = %+v, want %+v", i, img.Segments[i], want[i])
		}
		end = max(end, (want[i].Addr+want[i].Size+4095)&^4095)
	}
	if img.End != end {
		t.Errorf("End = 0x%x, want 0x%x", img.End, end)
	}
	if m.AnyMapped(0, NullGuard) {
		t.Error("a page below 0x10000 is mapped")
	}
	if m.AnyMapped(img.End, 1<<20) {
		t.Error("a page at or above End is mapped")
	}
	// Initialised data and bss.
	addr, size, ok := img.Symbols.Lookup("counter")
	if v, _ := m.Read32(addr); !ok || size != 4 || v != 1 {
		t.Errorf("counter: addr 0x%x size %d ok %v value %d; want size 4 value 1", addr, size, ok, v)
	}
	addr, size, ok = img.Symbols.Lookup("table")
	if !ok || size != 32 {
		t.Fatalf("table: 0x%x %d %v", addr, size, ok)
	}
	for a := addr; a < addr+size; a += 8 {
		if v, ok := m.Read64(a); !ok || v != 0 {
			t.Errorf("bss at 0x%x = %d %v, want 0", a, v, ok)
		}
	}
	if name, start, ok := img.Symbols.ObjectAt(addr + 12); !ok || name != "table" || start != addr {
		t.Errorf("ObjectAt(table+12) = %q 0x%x %v", name, start, ok)
	}
	if !img.Symbols.IsInstruction(img.Entry) || img.Symbols.IsInstruction(img.Entry+2) || img.Symbols.IsInstruction(addr) {
		t.Error("IsInstruction wrong for entry, entry+2 or data")
	}
}

// Two segments in one page: the page gets the union of their permissions
// and both contents.
func TestLoadSharedPage(t *testing.T) {
	b := tinyELF(t)
	ld := loads(b)
	text, data := phdr(b, ld[1]), phdr(b, ld[2])
	textEnd := le.Uint64(b[text+phVaddr:]) + le.Uint64(b[text+phMemsz:])
	set64(b, data+phVaddr, textEnd) // right after .text, same page
	m := mem.New()
	img, err := Load(b, m)
	if err != nil {
		t.Fatal(err)
	}
	page := textEnd &^ 4095
	if p, _ := m.PermAt(page); p != mem.PermR|mem.PermW|mem.PermX {
		t.Errorf("shared page perm = %v, want rwx", p)
	}
	if p, _ := m.PermAt(0x10000); p != mem.PermR {
		t.Errorf("header page perm = %v, want r--", p)
	}
	for _, off := range []int{text, data} {
		va, fo, fs := le.Uint64(b[off+phVaddr:]), le.Uint64(b[off+phOff:]), le.Uint64(b[off+phFilesz:])
		got := make([]byte, fs)
		if err := m.ReadBytes(va, got); err != nil || !bytes.Equal(got, b[fo:fo+fs]) {
			t.Errorf("segment at 0x%x: contents wrong (%v)", va, err)
		}
	}
	if img.End != page+4096 {
		t.Errorf("End = 0x%x, want 0x%x", img.End, page+4096)
	}
}

func TestLoadIntoUsedMemory(t *testing.T) {
	m := mem.New()
	if err := m.Map(0x11000, 4096, mem.PermR); err != nil {
		t.Fatal(err)
	}
	_, err := Load(tinyELF(t), m)
	var lerr *LoadError
	if !errors.As(err, &lerr) || !strings.Contains(err.Error(), "already mapped") {
		t.Fatalf("err = %v, want a LoadError about the mapped page", err)
	}
}

// A binary without symbols or DWARF loads; every lookup says so.
func TestLoadStrippedTiny(t *testing.T) {
	needTools(t, "llvm-objcopy")
	path := t.TempDir() + "/tiny.stripped"
	run(t, "llvm-objcopy", "--strip-all", "testdata/tiny.elf", path)
	m := mem.New()
	img, err := Load(readFile(t, path), m)
	if err != nil {
		t.Fatal(err)
	}
	s := img.Symbols
	if len(s.Functions()) != 0 || s.HasLines() || len(img.Warnings) != 0 {
		t.Errorf("stripped: %d functions, lines %v, warnings %q", len(s.Functions()), s.HasLines(), img.Warnings)
	}
	if _, _, ok := s.Lookup("_start"); ok {
		t.Error("Lookup found a symbol in a stripped binary")
	}
	if _, _, ok := s.FuncAt(img.Entry); ok {
		t.Error("FuncAt found a symbol in a stripped binary")
	}
	if _, _, ok := s.LineAt(img.Entry); ok {
		t.Error("LineAt found a line in a stripped binary")
	}
	if got, want := s.Describe(img.Entry+8, true).String(), fmt.Sprintf("0x%08x in <unknown>", img.Entry+4); got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if !s.IsInstruction(img.Entry) {
		t.Error("IsInstruction(entry) false without symbols")
	}
}

// A nil or empty *Symbols answers every question with "don't know".
func TestNilSymbols(t *testing.T) {
	var s *Symbols
	if _, _, ok := s.Lookup("x"); ok {
		t.Error("Lookup")
	}
	if _, _, ok := s.FuncAt(0x11000); ok {
		t.Error("FuncAt")
	}
	if _, _, ok := s.LineAt(0x11000); ok {
		t.Error("LineAt")
	}
	if s.IsInstruction(0x11000) || s.Functions() != nil {
		t.Error("IsInstruction/Functions")
	}
	if got := s.Describe(0x11000, false).String(); got != "0x00011000 in <unknown>" {
		t.Errorf("Describe = %q", got)
	}
	if got := s.Unwind(0x11000, 0x11004, 0x1000, 0x1000, func(uint64) (uint64, bool) { return 0, false }, 8); len(got) != 1 {
		t.Errorf("Unwind = %x", got)
	}
}

// Corrupt DWARF must not stop a load: the line tables are dropped with a
// warning. (debug/dwarf allocates from unchecked DWARF 5 line header counts,
// which would be a fatal out-of-memory error, and its Reader can return
// null entries forever after a corrupt sibling attribute.)
func TestCorruptDWARF(t *testing.T) {
	tiny := tinyELF(t)
	f, err := elf.NewFile(bytes.NewReader(tiny))
	if err != nil {
		t.Fatal(err)
	}
	patch := func(section string, at int, b []byte) []byte {
		sec := f.Section(section)
		if sec == nil {
			t.Fatalf("tiny.elf has no %s", section)
		}
		d := bytes.Clone(tiny)
		copy(d[int(sec.Offset)+at:int(sec.Offset+sec.Size)], b)
		return d
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		// The DWARF 5 line header's directory count (a ULEB at offset 33
		// in tiny.elf) becomes huge.
		{"huge directory count", patch(".debug_line", 33, []byte{0xff, 0xff, 0xff, 0xff, 0xff}), "malformed header"},
		{"runaway entries", patch(".debug_info", 170, []byte{0xff, 0xff, 0xff}), "do not end"},
		{"garbage line table", patch(".debug_line", 0, bytes.Repeat([]byte{0xee}, 64)), "line"},
		// opcode_base 0, then huge directory and file counts.
		{"opcode base 0", patch(".debug_line", 17, []byte("\x00\x00\xbb\xbb\xbb\xbb\xbb0\x00\xc0\xc0")), "malformed header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mem.New()
			img, err := Load(c.data, m)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(img.Warnings, "|"), c.want) {
				t.Errorf("warnings %q do not mention %q", img.Warnings, c.want)
			}
			if _, _, ok := img.Symbols.Lookup("add"); !ok {
				t.Error("symbols lost along with the line tables")
			}
		})
	}
}
