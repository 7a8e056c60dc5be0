package kernel

import "math/bits"

// The heap intrinsics. The handlers run with PC already past the ecall;
// stacks are taken at the ecall (inside the libc wrapper).

func (k *Kernel) atEcall(f func()) {
	k.cpu.PC -= 4
	f()
	k.cpu.PC += 4
}

// sysMalloc implements malloc(size).
func sysMalloc(k *Kernel, a args) (uint64, control) {
	var p uint64
	k.atEcall(func() { p = k.malloc(a.u64(0)) })
	if k.st.ended {
		return 0, ctlEnd
	}
	return p, ctlContinue
}

// sysCalloc implements calloc(n, size): memory is zero (fresh or scrubbed).
func sysCalloc(k *Kernel, a args) (uint64, control) {
	hi, total := bits.Mul64(a.u64(0), a.u64(1))
	if hi != 0 {
		return 0, ctlContinue
	}
	var p uint64
	k.atEcall(func() { p = k.malloc(total) })
	if k.st.ended {
		return 0, ctlEnd
	}
	return p, ctlContinue
}

// sysRealloc implements realloc(ptr, size). It always moves the block, so
// stale pointers to the old one are caught.
func sysRealloc(k *Kernel, a args) (uint64, control) {
	old, size := a.ptr(0), a.u64(1)
	var p uint64
	k.atEcall(func() {
		if old == 0 {
			p = k.malloc(size)
			return
		}
		b := k.st.heap.blockAt(old)
		if b == nil || b.addr != old {
			k.free(old, "realloc") // reports the bad pointer
			return
		}
		oldSize := b.size
		if size == 0 {
			k.free(old, "realloc")
			return
		}
		p = k.malloc(size)
		if p == 0 {
			return
		}
		n := oldSize
		if size < n {
			n = size
		}
		buf := make([]byte, n)
		k.charge(2 * n)
		k.mem.ReadBytes(old, buf)
		k.mem.WriteBytes(p, buf)
		k.free(old, "realloc")
	})
	if k.st.ended {
		return 0, ctlEnd
	}
	return p, ctlContinue
}

// sysFree implements free(ptr).
func sysFree(k *Kernel, a args) (uint64, control) {
	k.atEcall(func() { k.free(a.ptr(0), "free") })
	if k.st.ended {
		return 0, ctlEnd
	}
	return 0, ctlContinue
}
