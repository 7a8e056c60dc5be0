package elfsym

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"io"
	"sort"
	"strings"
)

// lineTable maps pc ranges to source lines: entry i covers
// [entries[i].addr, entries[i+1].addr). An entry with line <= 0 (an end of
// sequence, or compiler-generated code) means "no line".
type lineTable struct {
	entries []lineEntry
	files   []string
}

type lineEntry struct {
	addr uint64
	file int32
	line int32
}

type lineRow struct {
	addr uint64
	file int32
	line int32
}

type lineSeq struct {
	rows []lineRow
	end  uint64
}

// readLines builds the line table from every compile unit's DWARF line
// program. Any failure drops line information and returns a warning.
func (s *Symbols) readLines(f *elf.File) (warnings []string) {
	seqs, files, warns, err := collectLines(f)
	warnings = warns
	if err != nil {
		return append(warnings, "line information dropped: "+oneLine(err.Error()))
	}
	s.lines = buildLineTable(seqs, files, s)
	return warnings
}

func collectLines(f *elf.File) (seqs []lineSeq, files []string, warnings []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			seqs, files, err = nil, nil, fmt.Errorf("DWARF parser failed: %v", r)
		}
	}()
	if f.Section(".debug_info") == nil || f.Section(".debug_line") == nil {
		return nil, nil, nil, nil // no DWARF: not a problem
	}
	d, err := f.DWARF()
	if err != nil {
		return nil, nil, nil, err
	}
	// The bytes debug/dwarf uses for .debug_line: the last section of
	// that name (see elf.File.DWARF).
	var lineData []byte
	for _, sec := range f.Sections {
		if sec.Name == ".debug_line" || sec.Name == ".zdebug_line" {
			if lineData, err = sec.Data(); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	fileIndex := map[string]int32{}
	intern := func(name string) int32 {
		if i, ok := fileIndex[name]; ok {
			return i
		}
		i := int32(len(files))
		files = append(files, name)
		fileIndex[name] = i
		return i
	}
	// debug/dwarf's Reader can return null entries forever without
	// advancing when a sibling attribute is corrupt: every real entry
	// takes at least one byte, so stop after as many entries as
	// .debug_info has bytes.
	var infoSize uint64
	for _, sec := range f.Sections {
		if sec.Name == ".debug_info" || sec.Name == ".zdebug_info" {
			infoSize = max(infoSize, sec.Size)
		}
	}
	// Likewise every row of a line program takes at least one byte, and
	// each line table is read once however many units name it.
	rowBudget := uint64(len(lineData)) + 64
	seen := map[int64]bool{}
	r := d.Reader()
	for n := uint64(0); ; n++ {
		if n > infoSize+16 {
			warnings = append(warnings, "DWARF debugging entries do not end; the rest is ignored")
			break
		}
		e, err := r.Next()
		if err != nil {
			return nil, nil, nil, err
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagPartialUnit {
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		if e.Children {
			r.SkipChildren()
		}
		off, ok := e.Val(dwarf.AttrStmtList).(int64)
		if !ok || seen[off] {
			continue
		}
		seen[off] = true
		if !lineHeaderSafe(lineData, off) {
			warnings = append(warnings, fmt.Sprintf("line table at .debug_line+0x%x dropped: malformed header", off))
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil {
			warnings = append(warnings, "line table of a compile unit dropped: "+oneLine(err.Error()))
			continue
		}
		if lr == nil {
			continue
		}
		var le dwarf.LineEntry
		var cur []lineRow
		for {
			err := lr.Next(&le)
			if err == io.EOF {
				break
			}
			if err != nil {
				warnings = append(warnings, "line table of a compile unit cut short: "+oneLine(err.Error()))
				break
			}
			if rowBudget == 0 {
				warnings = append(warnings, "line tables have more rows than bytes; the rest is ignored")
				break
			}
			rowBudget--
			if le.EndSequence {
				if len(cur) > 0 {
					seqs = append(seqs, lineSeq{rows: cur, end: le.Address})
				}
				cur = nil
				continue
			}
			file := int32(-1)
			if le.File != nil {
				file = intern(cleanFile(le.File.Name))
			}
			line := int32(le.Line)
			if le.Line < 0 || le.Line > 1<<30 || file < 0 {
				line = 0
			}
			cur = append(cur, lineRow{addr: le.Address, file: file, line: line})
		}
	}
	return seqs, files, warnings, nil
}

// cleanFile makes a DWARF file name relative the way it was recorded:
// binaries are built with -fdebug-compilation-dir=. so names start with
// "./" (or are relative already).
func cleanFile(name string) string {
	for strings.HasPrefix(name, "./") {
		name = strings.TrimLeft(name[2:], "/")
	}
	return name
}

// buildLineTable flattens sequences into one sorted table. Sequences that do
// not start in code (functions discarded by the linker keep their line
// programs at address 0) are dropped, as is any sequence that overlaps an
// earlier one. Within a sequence, of several rows at one address the last
// wins, as in LLVM's symbolizer.
func buildLineTable(seqs []lineSeq, files []string, s *Symbols) lineTable {
	kept := seqs[:0]
	for _, q := range seqs {
		if len(q.rows) == 0 || !s.inCode(q.rows[0].addr) {
			continue
		}
		sort.SliceStable(q.rows, func(i, j int) bool { return q.rows[i].addr < q.rows[j].addr })
		if q.end < q.rows[len(q.rows)-1].addr {
			continue // malformed
		}
		kept = append(kept, q)
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].rows[0].addr < kept[j].rows[0].addr })
	var t lineTable
	t.files = files
	var prevEnd uint64
	push := func(e lineEntry) {
		if n := len(t.entries); n > 0 && t.entries[n-1].addr == e.addr {
			t.entries[n-1] = e
			return
		}
		t.entries = append(t.entries, e)
	}
	for i, q := range kept {
		if i > 0 && q.rows[0].addr < prevEnd {
			continue
		}
		for _, r := range q.rows {
			if r.addr >= q.end {
				break
			}
			push(lineEntry{addr: r.addr, file: r.file, line: r.line})
		}
		push(lineEntry{addr: q.end, file: -1, line: 0})
		prevEnd = q.end
	}
	return t
}

// LineAt returns the source file and line of the instruction at pc. File
// names are relative, as recorded with -fdebug-compilation-dir=. (a leading
// "./" removed). ok is false without line information for pc, including
// code the compiler attributes to line 0. For inlined code the line is in
// the inlined function's source (as llvm-addr2line reports without -i),
// while FuncAt names the function the code was inlined into.
func (s *Symbols) LineAt(pc uint64) (file string, line int, ok bool) {
	if s == nil {
		return "", 0, false
	}
	es := s.lines.entries
	i := sort.Search(len(es), func(i int) bool { return es[i].addr > pc }) - 1
	if i < 0 {
		return "", 0, false
	}
	e := es[i]
	if e.line <= 0 || e.file < 0 || int(e.file) >= len(s.lines.files) {
		return "", 0, false
	}
	return s.lines.files[e.file], int(e.line), true
}

// HasLines reports whether any line information was loaded.
func (s *Symbols) HasLines() bool { return s != nil && len(s.lines.entries) > 0 }

// lineHeaderSafe reports whether the line table header at off can be given
// to debug/dwarf. Its DWARF 5 reader sizes the directory and file tables
// from counts in the header without checking them against the data, so a
// corrupt count makes it allocate terabytes (a fatal error, not a panic).
// This walks the header the way debug/dwarf does and requires each count to
// be at most the number of bytes left in the table.
func lineHeaderSafe(sec []byte, off int64) bool {
	if off < 0 || off >= int64(len(sec)) {
		return true // debug/dwarf reports this itself
	}
	r := byteReader{b: sec, pos: int(off), ok: true}
	length := r.uint(4)
	dwarf64 := false
	switch {
	case length == 0xffffffff:
		dwarf64 = true
		length = r.uint(8)
	case length >= 0xfffffff0:
		return false
	}
	if !r.ok || length > uint64(len(sec)-r.pos) {
		return false
	}
	r.b = sec[:r.pos+int(length)] // the table's end
	version := r.uint(2)
	if !r.ok || version < 5 {
		return r.ok // older versions use terminated lists, bounded by the data
	}
	offSize := 4
	if dwarf64 {
		offSize = 8
	}
	r.skip(2)       // address_size, segment_selector_size
	r.skip(offSize) // header_length
	r.skip(5)       // minimum_instruction_length ... line_range
	if opcodeBase := int(r.uint(1)); opcodeBase > 1 {
		r.skip(opcodeBase - 1) // standard_opcode_lengths
	}
	for table := 0; table < 2; table++ { // directories, then files
		nforms := int(r.uint(1))
		forms := make([]uint64, 0, nforms)
		for i := 0; i < nforms; i++ {
			r.uleb() // content type
			forms = append(forms, r.uleb())
		}
		count := r.uleb()
		if !r.ok || count > uint64(len(r.b)-r.pos) {
			return false
		}
		if table == 1 {
			break
		}
		for i := uint64(0); i < count && r.ok; i++ {
			for _, form := range forms {
				r.skipForm(form, offSize)
			}
		}
	}
	return r.ok
}

// byteReader reads little-endian DWARF data; ok turns false at the end.
type byteReader struct {
	b   []byte
	pos int
	ok  bool
}

func (r *byteReader) skip(n int) {
	if n < 0 || n > len(r.b)-r.pos {
		r.ok, r.pos = false, len(r.b)
		return
	}
	r.pos += n
}

func (r *byteReader) uint(n int) uint64 {
	start := r.pos
	r.skip(n)
	if !r.ok {
		return 0
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(r.b[start+i])
	}
	return v
}

func (r *byteReader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.uint(1)
		if !r.ok {
			return 0
		}
		if shift < 64 {
			v |= (c & 0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
	}
}

// skipForm skips one attribute value as debug/dwarf's readLNCT reads it
// (forms it does not know consume nothing).
func (r *byteReader) skipForm(form uint64, offSize int) {
	switch form {
	case 0x08: // DW_FORM_string
		for r.ok && r.uint(1) != 0 {
		}
	case 0x0e, 0x1f, 0x1d: // strp, line_strp, strp_sup
		r.skip(offSize)
	case 0x1a, 0x0f: // strx, udata
		r.uleb()
	case 0x25, 0x0b: // strx1, data1
		r.skip(1)
	case 0x26, 0x05: // strx2, data2
		r.skip(2)
	case 0x27: // strx3
		r.skip(3)
	case 0x28, 0x06: // strx4, data4
		r.skip(4)
	case 0x07: // data8
		r.skip(8)
	case 0x1e: // data16
		r.skip(16)
	case 0x09: // block
		n := r.uleb()
		if n > uint64(len(r.b)) {
			r.skip(-1)
			return
		}
		r.skip(int(n))
	}
}
