package elfsym

import (
	"debug/elf"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Func is a function symbol.
type Func struct {
	Name  string
	Start uint64
	// Size is st_size; for a function symbol without a size (an assembly
	// label) it is the distance to the next function or to the end of its
	// executable segment.
	Size uint64
}

// End is the first address after the function.
func (f Func) End() uint64 { return f.Start + f.Size }

// codeRange is an executable segment and the instruction bytes from the file.
type codeRange struct {
	start, end uint64 // [start, end): the segment's memory range
	bytes      []byte // file bytes, starting at start; beyond them reads zero
}

// Symbols names addresses of one binary: functions and objects from the ELF
// symbol table, source lines from DWARF, and per-function frame layouts for
// unwinding. The zero value and nil are valid and know nothing. A *Symbols
// is immutable and safe for concurrent use.
type Symbols struct {
	code    []codeRange // sorted, disjoint
	funcs   []Func      // every function symbol (aliases too), by address then name
	ranges  []fnRange   // one per distinct start address, sorted: for FuncAt
	objects []Func      // object symbols, by address then name
	byName  map[string]symRef
	// bySource finds a C++ symbol by its name in the source, with or
	// without its parameters ("push(int)", "push"), where only one symbol
	// has it.
	bySource map[string]symRef

	lines lineTable
}

// fnRange is what FuncAt searches: one function per start address.
type fnRange struct {
	Func
	rule frameRule
}

type symRef struct {
	addr, size uint64
	rank       int // lower is preferred when names collide
}

// newSymbols reads the symbol table and DWARF. Problems become warnings.
func newSymbols(f *elf.File, code []codeRange) (s *Symbols, warnings []string) {
	s = &Symbols{code: code, byName: map[string]symRef{}}
	syms, err := safeSymbols(f)
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		warnings = append(warnings, "symbol table dropped: "+oneLine(err.Error()))
		syms = nil
	}
	type cand struct {
		Func
		rank int // FUNC/OBJECT before NOTYPE, then GLOBAL, WEAK, LOCAL
	}
	var funcs, objects []cand
	for _, sym := range syms {
		if sym.Name == "" || sym.Section == elf.SHN_UNDEF {
			continue
		}
		typ, bind := elf.ST_TYPE(sym.Info), elf.ST_BIND(sym.Info)
		rank := 0
		switch bind {
		case elf.STB_GLOBAL:
		case elf.STB_WEAK:
			rank = 1
		default:
			rank = 2
		}
		// Garbage sizes must not wrap around the address space.
		c := cand{Func{Name: sym.Name, Start: sym.Value, Size: min(sym.Size, ^uint64(0)-sym.Value)}, rank}
		switch typ {
		case elf.STT_FUNC:
			funcs = append(funcs, c)
		case elf.STT_OBJECT:
			objects = append(objects, c)
		case elf.STT_NOTYPE:
			// A global label in code written in assembly without .type
			// (e.g. a hand-written _start): treat it as a function.
			if bind != elf.STB_LOCAL && sym.Section != elf.SHN_ABS &&
				!strings.HasPrefix(sym.Name, "$") && !strings.HasPrefix(sym.Name, ".L") &&
				s.inCode(sym.Value) {
				c.rank += 10
				funcs = append(funcs, c)
			}
		}
	}
	less := func(v []cand) func(i, j int) bool {
		return func(i, j int) bool {
			a, b := v[i], v[j]
			if a.Start != b.Start {
				return a.Start < b.Start
			}
			if a.rank != b.rank {
				return a.rank < b.rank
			}
			return a.Name < b.Name
		}
	}
	sort.Slice(funcs, less(funcs))
	sort.Slice(objects, less(objects))

	// Distinct start addresses, preferred symbol first; sizeless symbols
	// extend to the next function or the end of their code range.
	for i, c := range funcs {
		if i > 0 && funcs[i-1].Start == c.Start {
			continue
		}
		s.ranges = append(s.ranges, fnRange{Func: c.Func})
	}
	for k := range s.ranges {
		f := &s.ranges[k].Func
		if f.Size != 0 {
			continue
		}
		end := f.Start
		if r := s.codeAt(f.Start); r != nil {
			end = r.end
		}
		if k+1 < len(s.ranges) {
			end = min(end, s.ranges[k+1].Start)
		}
		f.Size = end - f.Start
	}
	for i := range funcs {
		if funcs[i].Size == 0 {
			if k := s.rangeIndex(funcs[i].Start); k >= 0 && s.ranges[k].Start == funcs[i].Start {
				funcs[i].Size = s.ranges[k].Size
			}
		}
		s.funcs = append(s.funcs, funcs[i].Func)
	}
	for _, c := range objects {
		s.objects = append(s.objects, c.Func)
	}
	for _, list := range [][]cand{funcs, objects} {
		for _, c := range list {
			if old, ok := s.byName[c.Name]; !ok || c.rank < old.rank {
				s.byName[c.Name] = symRef{c.Start, c.Size, c.rank}
			}
		}
	}
	s.bySource = map[string]symRef{}
	ambiguous := map[string]bool{}
	for _, list := range [][]cand{funcs, objects} {
		for _, c := range list {
			for _, n := range sourceNames(c.Name) {
				if old, ok := s.bySource[n]; ok && old.addr != c.Start {
					ambiguous[n] = true
				}
				s.bySource[n] = symRef{c.Start, c.Size, c.rank}
			}
		}
	}
	for n := range ambiguous {
		delete(s.bySource, n)
	}
	for i := range s.ranges {
		s.ranges[i].rule = s.analyze(s.ranges[i].Func)
	}

	warnings = append(warnings, s.readLines(f)...)
	return s, dedupe(warnings)
}

// dedupe drops repeated warnings and keeps at most maxWarnings.
func dedupe(ws []string) []string {
	const maxWarnings = 10
	var out []string
	seen := map[string]bool{}
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	if len(out) > maxWarnings {
		out = append(out[:maxWarnings], fmt.Sprintf("(%d more warnings)", len(out)-maxWarnings))
	}
	return out
}

func safeSymbols(f *elf.File) (syms []elf.Symbol, err error) {
	defer func() {
		if r := recover(); r != nil {
			syms, err = nil, fmt.Errorf("symbol table parser failed: %v", r)
		}
	}()
	return f.Symbols()
}

// codeAt returns the executable segment holding addr, or nil.
func (s *Symbols) codeAt(addr uint64) *codeRange {
	if s == nil {
		return nil
	}
	i := sort.Search(len(s.code), func(i int) bool { return s.code[i].end > addr })
	if i < len(s.code) && s.code[i].start <= addr {
		return &s.code[i]
	}
	return nil
}

func (s *Symbols) inCode(addr uint64) bool { return s.codeAt(addr) != nil }

// insn returns the 32-bit word at addr in an executable segment.
func (s *Symbols) insn(addr uint64) (uint32, bool) {
	r := s.codeAt(addr)
	if r == nil || addr%4 != 0 || r.end-addr < 4 {
		return 0, false
	}
	off := addr - r.start
	if off >= uint64(len(r.bytes)) {
		return 0, true // zero-filled tail of the segment
	}
	var b [4]byte
	copy(b[:], r.bytes[off:])
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24, true
}

// IsInstruction reports whether addr can hold an instruction: it is inside
// an executable segment and 4-byte aligned (RV64IMA has no compressed
// instructions).
func (s *Symbols) IsInstruction(addr uint64) bool {
	r := s.codeAt(addr)
	return r != nil && addr%4 == 0 && r.end-addr >= 4
}

// rangeIndex is the index of the last function range starting at or before
// addr, or -1.
func (s *Symbols) rangeIndex(addr uint64) int {
	return sort.Search(len(s.ranges), func(i int) bool { return s.ranges[i].Start > addr }) - 1
}

func (s *Symbols) funcRange(pc uint64) *fnRange {
	if s == nil {
		return nil
	}
	k := s.rangeIndex(pc)
	if k < 0 || pc >= s.ranges[k].End() {
		return nil
	}
	return &s.ranges[k]
}

// FuncAt names the function holding pc.
func (s *Symbols) FuncAt(pc uint64) (name string, start uint64, ok bool) {
	r := s.funcRange(pc)
	if r == nil {
		return "", 0, false
	}
	return r.Name, r.Start, true
}

// ObjectAt names the data object (STT_OBJECT) holding addr.
func (s *Symbols) ObjectAt(addr uint64) (name string, start uint64, ok bool) {
	if s == nil {
		return "", 0, false
	}
	k := sort.Search(len(s.objects), func(i int) bool { return s.objects[i].Start > addr }) - 1
	// Objects may nest (a struct and a member alias): look back a little.
	for n := 0; k >= 0 && n < 16; k, n = k-1, n+1 {
		if o := s.objects[k]; addr < o.End() {
			return o.Name, o.Start, true
		}
	}
	return "", 0, false
}

// Lookup finds a function or object symbol by name. When several symbols
// share a name, a global one wins over a weak one over a local (static) one;
// among equals, the lowest address. A C++ symbol is also found by its name
// in the source, with or without parameters ("push(int)" or "push" for
// _ZL4pushi), when no other symbol has that name.
func (s *Symbols) Lookup(name string) (addr, size uint64, ok bool) {
	if s == nil {
		return 0, 0, false
	}
	r, ok := s.byName[name]
	if !ok {
		r, ok = s.bySource[name]
	}
	return r.addr, r.size, ok
}

// sourceNames are a C++ symbol's names in the source: demangled, and
// without its parameters; none for other symbols.
func sourceNames(name string) []string {
	if !strings.HasPrefix(name, "_Z") {
		return nil
	}
	full := Demangle(name)
	if full == name {
		return nil
	}
	out := []string{full}
	if plain, err := demangle.ToString(name, demangle.NoParams); err == nil && plain != full {
		out = append(out, plain)
	}
	return out
}

// Functions returns every function symbol sorted by address (aliases
// sharing an address sorted by name). The slice is a copy.
func (s *Symbols) Functions() []Func {
	if s == nil {
		return nil
	}
	return append([]Func(nil), s.funcs...)
}

// Objects returns every data object symbol sorted by address.
func (s *Symbols) Objects() []Func {
	if s == nil {
		return nil
	}
	return append([]Func(nil), s.objects...)
}

// Frame describes one program address for a report.
type Frame struct {
	PC     uint64 // for a call site, the call instruction (return address - 4)
	Func   string // "" when no symbol covers PC
	Offset uint64 // PC - start of Func
	File   string // "" when there is no line information
	Line   int
}

// String formats the frame as
//
//	0x000111c4 in mutex_lock (sdk/thrlib/mutex.c:42)
//
// omitting the parenthesis without line information and writing <unknown>
// without a symbol.
func (f Frame) String() string {
	name := Demangle(f.Func)
	if name == "" {
		name = "<unknown>"
	}
	s := fmt.Sprintf("0x%08x in %s", f.PC, name)
	if f.File != "" {
		s += fmt.Sprintf(" (%s:%d)", f.File, f.Line)
	}
	return s
}

// Demangle is a C++ symbol's name as its source writes it
// ("_ZL3popv" is "pop()"), for reports; any other name as it is. Names
// are matched (--pp, --data-race-func, the SDK's functions) as the
// symbol table spells them.
func Demangle(name string) string {
	if !strings.HasPrefix(name, "_Z") {
		return name
	}
	if d := demangle.Filter(name); d != name {
		return d
	}
	// A suffix the compiler added ("_ZL3top.0", a global it split):
	// the name, then the suffix.
	if i := strings.IndexByte(name, '.'); i > 0 {
		if d := demangle.Filter(name[:i]); d != name[:i] {
			return d + name[i:]
		}
	}
	return name
}

// Describe names pc. callSite says pc is a return address (an outer frame
// from Unwind); the frame is then the call instruction at pc-4, which is
// where the line information of the call is.
func (s *Symbols) Describe(pc uint64, callSite bool) Frame {
	if callSite && pc >= 4 {
		pc -= 4
	}
	fr := Frame{PC: pc}
	if name, start, ok := s.FuncAt(pc); ok {
		fr.Func, fr.Offset = name, pc-start
	}
	if file, line, ok := s.LineAt(pc); ok {
		fr.File, fr.Line = file, line
	}
	return fr
}

// DescribeStack describes the frames returned by Unwind: frame 0 as is and
// the outer frames as call sites.
func (s *Symbols) DescribeStack(pcs []uint64) []Frame {
	out := make([]Frame, len(pcs))
	for i, pc := range pcs {
		out[i] = s.Describe(pc, i > 0)
	}
	return out
}
