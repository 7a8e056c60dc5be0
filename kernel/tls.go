package kernel

import "fmt"

// Thread-local storage (__thread, _Thread_local, C++'s thread_local).
//
// The program's PT_TLS segment (elfsym.TLS; sdk/linker.ld puts .tdata and
// .tbss there) is the template of every thread's block. RISC-V uses TLS
// variant I with no thread control block before the variables: tp points
// at the block, and the linker resolves a variable's local-exec offset
// as its offset in the segment plus p_vaddr's misalignment to p_align.
// The kernel places each thread's block at the top of the thread's stack,
// below the top, with tp aligned, and the stack starting at tp:
//
//	top ┐ (stack top)
//	    │ .tdata copy, then .tbss zeros   ← tp + mis
//	tp  ┘ ← sp starts here, growing down
//
// so the block is the thread's own memory, as its stack is: its accesses
// are private until a pointer into it escapes (exposure.go), exactly as
// for a local variable. Threads that the kernel starts get a block: the
// main thread and pthread_create's. The P2 ABI's thread_create runs on a
// stack the thread library owns, and its threads share their creator's tp
// (the reference library and the P2 tests use no thread-local variables).

// tlsBlock writes a fresh copy of the TLS template just below top (on
// memory the caller mapped for the thread and nothing has written, so
// .tbss is zero already) and returns the thread's tp, which is also where
// its stack starts. Without a TLS segment it returns top.
func (k *Kernel) tlsBlock(top uint64) (uint64, error) {
	t := k.img.TLS
	if t == nil {
		return top, nil
	}
	mis := t.Addr & (t.Align - 1)
	tp := (top - t.Size - mis) &^ (max(t.Align, 16) - 1)
	if len(k.tlsInit) > 0 {
		if err := k.mem.WriteBytes(tp+mis, k.tlsInit); err != nil {
			return 0, fmt.Errorf("thread-local storage at 0x%x: %v", tp+mis, err)
		}
	}
	return tp, nil
}

// readTLSTemplate keeps the TLS segment's initial image (.tdata) as the
// program was loaded, for the blocks of threads made later.
func (k *Kernel) readTLSTemplate() error {
	t := k.img.TLS
	if t == nil || t.FileSize == 0 {
		return nil
	}
	k.tlsInit = make([]byte, t.FileSize)
	if err := k.mem.ReadBytes(t.Addr, k.tlsInit); err != nil {
		return fmt.Errorf("thread-local storage's initial image at 0x%x: %v", t.Addr, err)
	}
	return nil
}
