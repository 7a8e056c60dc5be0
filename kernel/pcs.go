package kernel

import (
	"fmt"

	"landslide/emu/cpu"
	"landslide/emu/elfsym"
	"landslide/emu/mem"
)

// MemoryPCs lists the address of every load, store and atomic instruction
// in the named functions: data-race PPs that preempt on each shared access
// those functions make (the thesis's TESTING_MUTEXES, or a race PP set
// chosen by hand).
func MemoryPCs(image []byte, funcs []string) ([]uint64, error) {
	m := mem.New()
	img, err := elfsym.Load(image, m)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, name := range funcs {
		start, size, ok := img.Symbols.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("function %q: no such symbol in the program", name)
		}
		code := make([]byte, size)
		if err := m.ReadBytes(start, code); err != nil {
			return nil, fmt.Errorf("function %q: %v", name, err)
		}
		for off := uint64(0); off+4 <= size; off += 4 {
			in := cpu.Decode(uint32(code[off]) | uint32(code[off+1])<<8 | uint32(code[off+2])<<16 | uint32(code[off+3])<<24)
			if in.Op.IsMemory() {
				out = append(out, start+off)
			}
		}
	}
	return out, nil
}
