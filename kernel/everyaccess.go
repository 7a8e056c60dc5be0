package kernel

import (
	"landslide/emu/mem"
	"landslide/record"
)

// Every shared access a PP (Config.EveryAccess), as Nidhugg and GenMC
// model a program: each transition performs at most one shared access
// (its event) and stops before the next one (PPAccess), so the
// explorer's transitions are those tools' events. Shared means what
// Access records: not the thread's own stack, and not read-only memory
// (code, constants), which no thread can write. An LR and the SC after it
// are one event (a compare-and-swap: a failed one is the LR's read
// alone); an AMO is one instruction. The pthread system calls are
// events too (sys_pthread.go: each is preceded by a PP and counts as its
// transition's event). Inside a transaction nothing is a PP.

// Before implements cpu.Gate.
func (k *Kernel) Before(addr uint64, size uint8, write, atomic bool, pc uint64) bool {
	if k.tr == nil || k.txn != nil || k.inAtomic() || !k.shared(addr, size, pc) {
		return true
	}
	if !k.evented {
		k.evented, k.lrHeld = true, atomic && !write
		return true
	}
	if atomic && write && k.lrHeld { // the SC of an LR/SC pair
		k.lrHeld = false
		return true
	}
	return false
}

// shared reports whether an access at addr is one Access records and
// another thread could conflict with: with the thread's own stack where
// a pointer to it escaped (Transition.Own) too, as the other tools treat
// a local whose address escaped.
func (k *Kernel) shared(addr uint64, size uint8, pc uint64) bool {
	if t := k.st.threads[k.st.cur]; k.private(t, addr, size, pc) {
		return t.exposedTo(addr, size)
	}
	if p, ok := k.mem.PermAt(addr); ok && p&mem.PermW == 0 {
		return false
	}
	return true
}

// private reports whether an access at addr is to thread t's own stack
// and not to a location another thread was seen to use there: Access does
// not record it, and it is no PP.
func (k *Kernel) private(t *thread, addr uint64, size uint8, pc uint64) bool {
	return addr >= t.stackLo && addr < t.stackHi &&
		(!k.sharedStack[addr&^7] && !k.sharedStack[(addr+uint64(size)-1)&^7] || k.frameAccess(pc))
}

// accessPP is the PP before a held-back access.
func (k *Kernel) accessPP(pc uint64) record.PP {
	k.ppStack = k.ppStackAt(pc)
	return record.PP{Kind: record.PPAccess, PC: pc, Func: k.funcName(pc)}
}
