package kernel

import (
	"fmt"

	"landslide/record"
)

const maxIO = 1 << 20

// sysWrite implements write(fd, buf, len) for fd 1 and 2 (Linux number 64,
// so ISA test binaries also run under qemu-user).
func sysWrite(k *Kernel, a args) (uint64, control) {
	fd, buf, n := a.long(0), a.ptr(1), a.u64(2)
	if fd != 1 && fd != 2 {
		return errno(9), ctlContinue // EBADF
	}
	if n > maxIO {
		n = maxIO
	}
	k.charge(n)
	b := make([]byte, n)
	if k.mem.ReadBytes(buf, b) != nil {
		return errno(14), ctlContinue // EFAULT
	}
	k.appendOutput(b)
	return n, ctlContinue
}

func errno(e int64) uint64 { return uint64(-e) }

// sysPrint implements Pebbles print(len, buf).
func sysPrint(k *Kernel, a args) (uint64, control) {
	n, buf := a.int(0), a.ptr(1)
	if n < 0 || n > maxIO {
		return errno(1), ctlContinue
	}
	k.charge(uint64(n))
	b := make([]byte, n)
	if k.mem.ReadBytes(buf, b) != nil {
		return errno(1), ctlContinue
	}
	k.appendOutput(b)
	return 0, ctlContinue
}

// sysPanic implements panic(msg, len): an assertion failure or panic.
func sysPanic(k *Kernel, a args) (uint64, control) {
	if k.svcompAbort() {
		return k.svcompEnd()
	}
	p, n := a.ptr(0), a.u64(1)
	if n > 4096 {
		n = 4096
	}
	b := make([]byte, n)
	msg := "panic (message unreadable)"
	if k.mem.ReadBytes(p, b) == nil {
		msg = string(b)
	}
	// Report at the ecall, inside the panic wrapper.
	k.bugAt(record.BugAssert, msg, k.cpu.PC-4, nil)
	return 0, ctlEnd
}

// sysDumpStack implements tell_landslide_dump_stack(): the caller's stack
// goes to the checker's diagnostics.
func sysDumpStack(k *Kernel, a args) (uint64, control) {
	var s string
	for i, pc := range k.stackAt(k.cpu.PC - 4) {
		f := k.syms.Describe(pc, i > 0)
		s += fmt.Sprintf("  %s\n", f)
	}
	k.st.diag = append(k.st.diag[:len(k.st.diag):len(k.st.diag)], fmt.Sprintf("stack of thread %d:\n%s", k.curTID(), s))
	return 0, ctlContinue
}
