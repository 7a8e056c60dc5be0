package kernel

import (
	"fmt"
	"slices"

	"landslide/emu/cpu"
	"landslide/emu/elfsym"
	"landslide/emu/mem"
	"landslide/record"
)

// MemoryPCs lists the address of every load, store and atomic instruction
// in the named functions: data-race PPs that preempt on each shared access
// those functions make (the thesis's TESTING_MUTEXES, or a race PP set
// chosen by hand).
func MemoryPCs(image []byte, funcs []string) ([]uint64, error) {
	return functionPCs(image, funcs, false)
}

// SharedMemoryPCs is MemoryPCs without the accesses relative to sp or fp
// (the thread's own stack frame: prologue saves, locals), which can never
// be shared: the data-race PPs of --data-race-func.
func SharedMemoryPCs(image []byte, funcs []string) ([]uint64, error) {
	return functionPCs(image, funcs, true)
}

// functionPCs lists the memory instructions of the named functions
// (without sp/fp-relative ones if shared is set).
func functionPCs(image []byte, funcs []string, shared bool) ([]uint64, error) {
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
		pcs, err := memoryInsts(m, start, size, shared)
		if err != nil {
			return nil, fmt.Errorf("function %q: %v", name, err)
		}
		out = append(out, pcs...)
	}
	return out, nil
}

// TooDeepPreemptEverywhere is the PP cap of one execution when every
// shared access is a PP (thesis: 2^20 instead of TOO_DEEP_0TH_BRANCH).
const TooDeepPreemptEverywhere = 1 << 20

// MutexFuncs are the trusted mutex implementation: preempt-everywhere
// leaves their accesses alone (thesis §3.4.1).
var MutexFuncs = []string{record.MutexInit.String(), record.MutexDestroy.String(), record.MutexLock.String(), record.MutexUnlock.String()}

// SharedAccessPCs lists the PPs of preempt-everywhere mode (the thesis's
// -0): every load, store and atomic of every function except the mutex
// implementation, leaving out accesses relative to sp or fp (the thread's
// own stack frame).
func SharedAccessPCs(image []byte) ([]uint64, error) {
	m := mem.New()
	img, err := elfsym.Load(image, m)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, f := range img.Symbols.Functions() {
		if slices.Contains(MutexFuncs, f.Name) {
			continue
		}
		pcs, err := memoryInsts(m, f.Start, f.Size, true)
		if err != nil {
			continue // a symbol over unmapped bytes: nothing to preempt
		}
		out = append(out, pcs...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// memoryInsts lists the memory instructions in [start, start+size),
// without sp/fp-relative ones if shared is set.
func memoryInsts(m *mem.Memory, start, size uint64, shared bool) ([]uint64, error) {
	code := make([]byte, size)
	if err := m.ReadBytes(start, code); err != nil {
		return nil, err
	}
	var out []uint64
	for off := uint64(0); off+4 <= size; off += 4 {
		in := cpu.Decode(uint32(code[off]) | uint32(code[off+1])<<8 | uint32(code[off+2])<<16 | uint32(code[off+3])<<24)
		if !in.Op.IsMemory() || (shared && (in.Rs1 == 2 || in.Rs1 == 8)) {
			continue
		}
		out = append(out, start+off)
	}
	return out, nil
}
