package kernel

import (
	"fmt"

	"landslide/emu/mem"
)

// sysNewPages implements new_pages(base, len): base and len page aligned,
// the range free and outside the heap arena and the null guard.
func sysNewPages(k *Kernel, a args) (uint64, control) {
	base, n := a.ptr(0), uint64(a.int(1))
	if a.int(1) <= 0 || base&(PageSize-1) != 0 || n&(PageSize-1) != 0 || base < NullGuardEnd ||
		base >= mem.Limit || n > mem.Limit-base {
		return errno(1), ctlContinue
	}
	if base < HeapLimit && base+n > HeapBase {
		return errno(1), ctlContinue
	}
	if k.mem.AnyMapped(base, n) {
		return errno(1), ctlContinue
	}
	if k.memoryUsed()+n > k.cfg.MaxMemory {
		k.memoryLimit(fmt.Sprintf("new_pages(0x%x, %d)", base, n))
		return 0, ctlEnd
	}
	if err := k.mem.Map(base, n, mem.PermR|mem.PermW); err != nil {
		return errno(1), ctlContinue
	}
	k.addRegion(region{base, n})
	return 0, ctlContinue
}

// sysRemovePages implements remove_pages(base): base must start a region
// that new_pages allocated. Later accesses there are reported with the
// stack of this call.
func sysRemovePages(k *Kernel, a args) (uint64, control) {
	base := a.ptr(0)
	for i, r := range k.st.regions {
		if r.base != base {
			continue
		}
		k.mem.Unmap(r.base, r.size)
		k.wakeRange(r.base, r.size) // a spinner reading them would now fault
		k.st.regions = append(k.st.regions[:i:i], k.st.regions[i+1:]...)
		rm := k.st.removed
		if len(rm) >= 64 {
			rm = rm[1:]
		}
		k.st.removed = append(rm[:len(rm):len(rm)], removedRegion{region: r, thread: k.curTID(), stack: k.stackAt(k.cpu.PC - 4)})
		// A thread whose stack this was keeps the bounds: accesses fault.
		return 0, ctlContinue
	}
	return errno(1), ctlContinue
}
