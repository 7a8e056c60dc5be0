package elfsym

import (
	"debug/elf"
	"strings"
)

// DirectiveSection is the ELF section in which LANDSLIDE_CONFIG (the SDK's
// landslide.h) records a test's directives for the model checker: one
// NUL-terminated line of printable ASCII each, never loaded into memory.
const DirectiveSection = ".landslide"

// MaxDirectiveBytes bounds the directive section: it holds a handful of
// short lines, and a larger one is a malformed binary, not a test.
const MaxDirectiveBytes = 16 << 10

// readDirectives returns the lines of the directive section, in file order,
// or nil when the binary has none. Empty lines (padding between objects)
// are skipped; anything else that is not printable ASCII is an error.
func readDirectives(f *elf.File, size int) ([]string, error) {
	s := f.Section(DirectiveSection)
	if s == nil {
		return nil, nil
	}
	if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_ALLOC != 0 {
		return nil, loadErr("section %s: not a non-loaded PROGBITS section (type %v, flags %v)", DirectiveSection, s.Type, s.Flags)
	}
	if s.Size > MaxDirectiveBytes {
		return nil, loadErr("section %s: %d bytes, more than the %d a directive section may hold", DirectiveSection, s.Size, MaxDirectiveBytes)
	}
	if s.Offset > uint64(size) || s.Size > uint64(size)-s.Offset {
		return nil, loadErr("truncated: section %s extends past end of file", DirectiveSection)
	}
	data, err := s.Data()
	if err != nil {
		return nil, loadErr("section %s: %s", DirectiveSection, oneLine(err.Error()))
	}
	if len(data) > 0 && data[len(data)-1] != 0 {
		return nil, loadErr("section %s: the last directive is not NUL-terminated", DirectiveSection)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00") {
		if line == "" {
			continue
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; c < 0x20 || c > 0x7e {
				return nil, loadErr("section %s: directive %q is not printable ASCII", DirectiveSection, line)
			}
		}
		out = append(out, line)
	}
	return out, nil
}
