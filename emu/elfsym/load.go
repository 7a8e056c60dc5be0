package elfsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"landslide/emu/mem"
)

// NullGuard is the size of the region at address 0 that is never mapped, so
// that null-pointer accesses (and small offsets from null) fault.
const NullGuard = 0x10000

// MaxMemory is the limit on the total memory size of a binary's segments.
const MaxMemory = 1 << 30

// LoadError is why a binary cannot be loaded. Reason is one line.
type LoadError struct {
	Reason string
}

func (e *LoadError) Error() string { return e.Reason }

func loadErr(format string, args ...any) *LoadError {
	return &LoadError{Reason: fmt.Sprintf(format, args...)}
}

// Segment is one loaded PT_LOAD segment.
type Segment struct {
	Addr     uint64 // p_vaddr
	Size     uint64 // p_memsz
	FileSize uint64 // p_filesz: bytes copied from the file; the rest is zero
	Perm     mem.Perm
}

// TLS is the program's thread-local storage template (its PT_TLS
// segment): every thread gets a block of Size bytes aligned to Align,
// holding a copy of the FileSize bytes at Addr (inside a loaded
// segment's file bytes, .tdata) followed by zeros (.tbss).
type TLS struct {
	Addr     uint64 // p_vaddr
	FileSize uint64 // p_filesz
	Size     uint64 // p_memsz
	Align    uint64 // p_align, a power of two (1 where the file says 0)
}

// MaxTLS and MaxTLSAlign bound a PT_TLS segment: the kernel places each
// thread's block at the top of the thread's stack.
const (
	MaxTLS      = 64 << 10
	MaxTLSAlign = mem.PageSize
)

// End is the first address after the segment.
func (s Segment) End() uint64 { return s.Addr + s.Size }

// Image is a validated, loaded guest executable.
type Image struct {
	// Entry is the ELF entry point (inside an executable segment).
	Entry uint64
	// Segments are the PT_LOAD segments with a non-zero memory size, sorted
	// by address.
	Segments []Segment
	// End is the first page-aligned address above every mapped page: the
	// kernel may place the heap or other mappings at or after it.
	End uint64
	// TLS is the thread-local storage template; nil when the program has
	// no thread-local variables.
	TLS *TLS
	// Symbols names addresses in the binary. It is never nil.
	Symbols *Symbols
	// Directives are the test's LANDSLIDE_CONFIG lines (DirectiveSection),
	// in file order; nil when it has none. They are not interpreted here.
	Directives []string
	// Warnings describe debugging information that was present but could
	// not be used (and was dropped). The binary still runs.
	Warnings []string

	data []byte   // the file, until mapped
	offs []uint64 // file offsets of Segments, until mapped
}

// Load validates an ELF executable, maps its PT_LOAD segments into m with
// the permissions from p_flags (a page shared by two segments gets the
// union), copies the file bytes and leaves the rest of each segment zero.
// Every page of [0, NullGuard) stays unmapped.
//
// All validation happens before m is touched, so a *LoadError from
// validation leaves m unchanged; an error from m.Map (a page already mapped
// by the caller) may leave earlier segments mapped.
func Load(data []byte, m *mem.Memory) (*Image, error) {
	img, err := parse(data)
	if err != nil {
		return nil, err
	}
	err = img.mapInto(m)
	img.data, img.offs = nil, nil
	if err != nil {
		return nil, err
	}
	return img, nil
}

// Parse validates an ELF executable and reads its symbols and line tables
// without loading it anywhere (for tools that only name addresses). It
// accepts exactly the binaries Load accepts.
func Parse(data []byte) (*Image, error) {
	img, err := parse(data)
	if err != nil {
		return nil, err
	}
	img.data, img.offs = nil, nil
	return img, nil
}

func parse(data []byte) (img *Image, err error) {
	// debug/elf and debug/dwarf have panicked on malformed input in the past.
	// Explicit checks come first; this is only the last line of defence.
	defer func() {
		if r := recover(); r != nil {
			img = nil
			err = loadErr("malformed ELF (the ELF parser failed: %s)", oneLine(fmt.Sprint(r)))
		}
	}()
	if err := checkHeader(data); err != nil {
		return nil, err
	}
	f, ferr := elf.NewFile(bytes.NewReader(data))
	if ferr != nil {
		if errors.Is(ferr, io.EOF) || errors.Is(ferr, io.ErrUnexpectedEOF) {
			return nil, loadErr("truncated: section headers or tables extend past end of file")
		}
		return nil, loadErr("malformed ELF: %s", oneLine(ferr.Error()))
	}
	img = &Image{Entry: f.Entry, data: data}
	var total uint64
	for i, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			return nil, loadErr("dynamically linked executable (PT_INTERP) is not supported; link with -static")
		case elf.PT_LOAD:
		case elf.PT_TLS:
			if p.Memsz == 0 {
				continue // sdk/linker.ld's, in a program with no thread-local variables
			}
			if img.TLS != nil {
				return nil, loadErr("segment %d: a second PT_TLS segment", i)
			}
			if p.Filesz > p.Memsz {
				return nil, loadErr("thread-local storage (segment %d): file size 0x%x exceeds memory size 0x%x", i, p.Filesz, p.Memsz)
			}
			if p.Memsz > MaxTLS {
				return nil, loadErr("thread-local storage of %d bytes: each thread's block may take at most %d KiB", p.Memsz, MaxTLS>>10)
			}
			align := max(p.Align, 1)
			if align&(align-1) != 0 || align > MaxTLSAlign {
				return nil, loadErr("thread-local storage (segment %d): alignment 0x%x is not a power of two up to 0x%x", i, p.Align, MaxTLSAlign)
			}
			img.TLS = &TLS{Addr: p.Vaddr, FileSize: p.Filesz, Size: p.Memsz, Align: align}
			continue
		default:
			continue
		}
		if p.Filesz > p.Memsz {
			return nil, loadErr("segment %d: file size 0x%x exceeds memory size 0x%x", i, p.Filesz, p.Memsz)
		}
		if p.Off > uint64(len(data)) || p.Filesz > uint64(len(data))-p.Off {
			return nil, loadErr("truncated: segment %d extends past end of file", i)
		}
		if p.Memsz == 0 {
			continue
		}
		if p.Vaddr < NullGuard {
			return nil, loadErr("segment %d at 0x%x is below 0x%x (the null guard region)", i, p.Vaddr, NullGuard)
		}
		if p.Vaddr >= mem.Limit || p.Memsz > mem.Limit-p.Vaddr {
			return nil, loadErr("segment %d at 0x%x+0x%x is beyond the guest address limit 0x%x", i, p.Vaddr, p.Memsz, uint64(mem.Limit))
		}
		if p.Memsz > MaxMemory || total+p.Memsz > MaxMemory {
			return nil, loadErr("too large: the segments need at least %d MiB of memory; the limit is %d MiB", (total+p.Memsz)>>20, MaxMemory>>20)
		}
		total += p.Memsz
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
		img.Segments = append(img.Segments, Segment{Addr: p.Vaddr, Size: p.Memsz, FileSize: p.Filesz, Perm: perm})
		img.offs = append(img.offs, p.Off)
	}
	if len(img.Segments) == 0 {
		return nil, loadErr("no loadable segments")
	}
	sort.Sort(bySegAddr{img})
	for i := 1; i < len(img.Segments); i++ {
		a, b := img.Segments[i-1], img.Segments[i]
		if b.Addr < a.End() {
			return nil, loadErr("segment at 0x%x overlaps segment at 0x%x", b.Addr, a.Addr)
		}
	}
	entryOK := false
	for _, s := range img.Segments {
		if s.Perm&mem.PermX != 0 && img.Entry >= s.Addr && img.Entry < s.End() {
			entryOK = true
		}
		if e := pageUp(s.End()); e > img.End {
			img.End = e
		}
	}
	if t := img.TLS; t != nil && t.FileSize > 0 {
		// The kernel copies the template from memory: it must be loaded.
		in := false
		for _, s := range img.Segments {
			if t.Addr >= s.Addr && t.Addr < s.Addr+s.FileSize && t.FileSize <= s.Addr+s.FileSize-t.Addr {
				in = true
			}
		}
		if !in {
			return nil, loadErr("thread-local storage's initial image at 0x%x+0x%x is not in a loaded segment's file bytes", t.Addr, t.FileSize)
		}
	}
	if !entryOK {
		return nil, loadErr("entry point 0x%x is not in an executable segment", img.Entry)
	}
	if img.Entry%4 != 0 {
		return nil, loadErr("entry point 0x%x is not 4-byte aligned", img.Entry)
	}
	var code []codeRange
	for i, s := range img.Segments {
		if s.Perm&mem.PermX != 0 {
			b := append([]byte(nil), data[img.offs[i]:img.offs[i]+s.FileSize]...)
			code = append(code, codeRange{start: s.Addr, end: s.End(), bytes: b})
		}
	}
	if img.Directives, err = readDirectives(f, len(data)); err != nil {
		return nil, err
	}
	img.Symbols, img.Warnings = newSymbols(f, code)
	return img, nil
}

type bySegAddr struct{ img *Image }

func (b bySegAddr) Len() int { return len(b.img.Segments) }
func (b bySegAddr) Less(i, j int) bool {
	return b.img.Segments[i].Addr < b.img.Segments[j].Addr
}
func (b bySegAddr) Swap(i, j int) {
	s, o := b.img.Segments, b.img.offs
	s[i], s[j] = s[j], s[i]
	o[i], o[j] = o[j], o[i]
}

func pageDown(a uint64) uint64 { return a &^ (mem.PageSize - 1) }
func pageUp(a uint64) uint64   { return (a + mem.PageSize - 1) &^ (mem.PageSize - 1) }

// checkHeader checks the ELF identification and header fields that decide
// whether this is a binary we can run, so that each problem gets its own
// clear message before debug/elf sees the file.
func checkHeader(data []byte) error {
	if len(data) < 4 || string(data[:4]) != elf.ELFMAG {
		return loadErr("not an ELF file")
	}
	if len(data) < 6 {
		return loadErr("truncated: ELF header is incomplete")
	}
	switch elf.Class(data[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
	case elf.ELFCLASS32:
		return loadErr("ELF is 32-bit; want ELF64 RISC-V")
	default:
		return loadErr("not an ELF file (invalid class %d)", data[elf.EI_CLASS])
	}
	switch elf.Data(data[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
	case elf.ELFDATA2MSB:
		return loadErr("ELF is big-endian; want little-endian RISC-V")
	default:
		return loadErr("not an ELF file (invalid data encoding %d)", data[elf.EI_DATA])
	}
	const ehsize = 64
	if len(data) < ehsize {
		return loadErr("truncated: ELF header needs %d bytes, file has %d", ehsize, len(data))
	}
	le := binary.LittleEndian
	if mach := elf.Machine(le.Uint16(data[18:])); mach != elf.EM_RISCV {
		return loadErr("ELF machine is %s; want RISC-V (EM_RISCV)", machineName(mach))
	}
	switch t := elf.Type(le.Uint16(data[16:])); t {
	case elf.ET_EXEC:
	case elf.ET_DYN:
		return loadErr("not an executable (ET_DYN/PIE not supported; link with -static -no-pie)")
	case elf.ET_REL:
		return loadErr("not an executable (ET_REL: an object file; link it first)")
	case elf.ET_CORE:
		return loadErr("not an executable (ET_CORE: a core dump)")
	default:
		return loadErr("not an executable (ELF type 0x%x)", uint16(t))
	}
	phoff := le.Uint64(data[32:])
	phentsize := uint64(le.Uint16(data[54:]))
	phnum := uint64(le.Uint16(data[56:]))
	if phnum == 0 {
		return loadErr("no loadable segments")
	}
	if phentsize != 56 {
		return loadErr("malformed ELF: program header entry size is %d, want 56", phentsize)
	}
	if phoff > uint64(len(data)) || phnum*phentsize > uint64(len(data))-phoff {
		return loadErr("truncated: program headers extend past end of file")
	}
	// A truncated file loses its section headers first, which debug/elf
	// reports obscurely: check the loadable contents here.
	for i := uint64(0); i < phnum; i++ {
		ph := data[phoff+i*phentsize:]
		if elf.ProgType(le.Uint32(ph)) != elf.PT_LOAD {
			continue
		}
		off, filesz, memsz := le.Uint64(ph[8:]), le.Uint64(ph[32:]), le.Uint64(ph[40:])
		if filesz > memsz {
			return loadErr("segment %d: file size 0x%x exceeds memory size 0x%x", i, filesz, memsz)
		}
		if off > uint64(len(data)) || filesz > uint64(len(data))-off {
			return loadErr("truncated: segment %d extends past end of file", i)
		}
	}
	return nil
}

func machineName(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "x86-64"
	case elf.EM_386:
		return "i386"
	case elf.EM_AARCH64:
		return "AArch64"
	case elf.EM_ARM:
		return "ARM"
	case elf.EM_NONE:
		return "none (EM_NONE)"
	}
	s := m.String()
	if strings.HasPrefix(s, "EM_") && !strings.Contains(s, "+") {
		return s[3:]
	}
	return fmt.Sprintf("unknown (e_machine %d)", uint16(m))
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// mapInto maps the validated segments into m and copies their file bytes.
func (img *Image) mapInto(m *mem.Memory) error {
	// Page ranges of segments may share boundary pages (several small
	// segments may even share one page): sweep over the page boundaries,
	// keeping a count per permission bit, and map maximal runs of pages with
	// one permission.
	type event struct {
		at    uint64
		delta int
		perm  mem.Perm
	}
	ev := make([]event, 0, 2*len(img.Segments))
	for _, s := range img.Segments {
		ev = append(ev, event{pageDown(s.Addr), +1, s.Perm}, event{pageUp(s.End()), -1, s.Perm})
	}
	sort.Slice(ev, func(i, j int) bool { return ev[i].at < ev[j].at })
	var cnt [3]int // R, W, X
	var covered int
	bits := [3]mem.Perm{mem.PermR, mem.PermW, mem.PermX}
	runStart, runPerm, inRun := uint64(0), mem.Perm(0), false
	flush := func(end uint64) error {
		if inRun && end > runStart {
			if err := m.Map(runStart, end-runStart, runPerm); err != nil {
				return loadErr("mapping 0x%x-0x%x: %s", runStart, end, oneLine(err.Error()))
			}
		}
		inRun = false
		return nil
	}
	for i := 0; i < len(ev); {
		at := ev[i].at
		for ; i < len(ev) && ev[i].at == at; i++ {
			covered += ev[i].delta
			for b, bit := range bits {
				if ev[i].perm&bit != 0 {
					cnt[b] += ev[i].delta
				}
			}
		}
		var perm mem.Perm
		for b, bit := range bits {
			if cnt[b] > 0 {
				perm |= bit
			}
		}
		if inRun && (covered == 0 || perm != runPerm) {
			if err := flush(at); err != nil {
				return err
			}
		}
		if covered > 0 && !inRun {
			runStart, runPerm, inRun = at, perm, true
		}
	}
	// Fresh pages read as zero (mem.Map's contract), so only the file bytes
	// need copying.
	for i, s := range img.Segments {
		if s.FileSize == 0 {
			continue
		}
		off := img.offs[i]
		if err := m.WriteBytes(s.Addr, img.data[off:off+s.FileSize]); err != nil {
			return loadErr("loading segment at 0x%x: %s", s.Addr, oneLine(err.Error()))
		}
	}
	return nil
}
