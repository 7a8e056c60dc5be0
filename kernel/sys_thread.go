package kernel

import (
	"landslide/emu/mem"
	"landslide/record"
	"slices"
)

// sysGettid implements gettid().
func sysGettid(k *Kernel, a args) (uint64, control) { return uint64(k.curTID()), ctlContinue }

// newThread adds a runnable thread, or records a limit bug.
func (k *Kernel) newThread(t thread) (record.TID, bool) {
	if len(k.st.threads) >= k.cfg.MaxThreads {
		k.threadLimit()
		return 0, false
	}
	t.tid = k.st.nextTID
	k.st.nextTID++
	t.gen = k.epoch
	k.st.threads = append(k.st.threads, &t) // tids ascend, so the slice stays sorted
	k.syncEvent(record.SyncEvent{Kind: record.SyncCreate, Other: t.tid})
	return t.tid, true
}

// sysThreadFork implements Pebbles thread_fork(): the child starts with a
// copy of every register and returns 0; the parent gets the child's tid.
func sysThreadFork(k *Kernel, a args) (uint64, control) {
	t := thread{regs: k.cpu.X, pc: k.cpu.PC}
	t.regs[10] = 0
	for _, v := range t.regs { // the child starts with every one of them
		k.expose(v)
	}
	// Its stack is unknown until it moves sp; use the region it will use
	// once it does (found lazily in stackRegion).
	tid, ok := k.newThread(t)
	if !ok {
		return 0, ctlEnd
	}
	k.runState(tid, record.RunStateChanged)
	return uint64(tid), ctlPP(record.PPCreate)
}

// sysThreadCreate implements thread_create(stack_top, entry, arg): a new
// thread runs entry(arg) on stack_top with ra = 0.
func sysThreadCreate(k *Kernel, a args) (uint64, control) {
	top, entry, arg := a.ptr(0), a.ptr(1), a.u64(2)
	if top&15 != 0 || top < NullGuardEnd+16 {
		return errno(1), ctlContinue
	}
	if p, ok := k.mem.PermAt(top - 16); !ok || p&mem.PermW == 0 {
		return errno(1), ctlContinue
	}
	if p, ok := k.mem.PermAt(entry); !ok || p&mem.PermX == 0 || entry&3 != 0 {
		return errno(1), ctlContinue
	}
	t := thread{pc: entry}
	t.regs[2] = top
	t.regs[3] = k.cpu.X[3] // gp
	t.regs[4] = k.cpu.X[4] // tp
	t.regs[10] = arg
	t.stackLo, t.stackHi = k.stackRegion(top - 1)
	k.expose(arg)
	tid, ok := k.newThread(t)
	if !ok {
		return 0, ctlEnd
	}
	k.runState(tid, record.RunStateChanged)
	return uint64(tid), ctlPP(record.PPCreate)
}

// stackRegion finds the memory a stack at addr lives in: a new_pages
// region, a heap block, or the 1 MiB below it.
func (k *Kernel) stackRegion(addr uint64) (lo, hi uint64) {
	if r, ok := k.regionAt(addr); ok {
		return r.base, r.base + r.size
	}
	if b := k.st.heap.blockAt(addr); b != nil {
		return b.addr, b.addr + b.size
	}
	if addr < MainStackTop && addr >= MainStackTop-roundUp(k.cfg.StackSize, mem.PageSize) {
		return MainStackTop - roundUp(k.cfg.StackSize, mem.PageSize), MainStackTop
	}
	lo = 0
	if addr > 1<<20 {
		lo = addr + 1 - 1<<20
	}
	return lo, addr + 1
}

// sysVanish implements vanish(): the calling thread ends; the process ends
// with the last thread.
func sysVanish(k *Kernel, a args) (uint64, control) {
	t := k.cur()
	if k.lineupExit(t); k.st.ended {
		return 0, ctlEnd
	}
	k.syncEvent(record.SyncEvent{Kind: record.SyncExit})
	k.runState(t.tid, record.RunStateChanged)
	if len(k.st.threads) == 1 {
		// The last thread: the process ends here, while the thread still
		// exists, so a failed post-test check shows where it exited.
		k.endProcess(k.st.status)
		return 0, ctlEnd
	}
	i, tid := k.st.cur, t.tid
	// In place: the live array of threads is the kernel's own (Snapshot
	// and Restore copy it), and copying the rest of them at every exit was
	// a fifth of all the bytes an exploration allocated.
	k.st.threads = slices.Delete(k.st.threads, i, i+1)
	k.st.cur = -1
	k.cpu.ClearReservation()
	// Keep curTID meaningful for Default: remember where we were.
	k.st.lastExited = tid
	return 0, control{pp: record.PPExit, noResult: true}
}

// sysSetStatus implements set_status(status).
func sysSetStatus(k *Kernel, a args) (uint64, control) {
	k.st.status = int(a.int(0))
	return 0, ctlContinue
}

// sysExit implements exit(status), exit_group and task_vanish(status): the
// whole process ends. With Config.WaitForThreads, the exit that ends
// main's return (crt0 calls exit with main's result) ends the main thread
// only, with that status for the process.
func sysExit(k *Kernel, a args) (uint64, control) {
	if k.cfg.WaitForThreads && k.mainReturned() {
		k.st.status = int(a.int(0))
		return sysVanish(k, a)
	}
	k.killOthers()
	k.endProcess(int(a.int(0)))
	return 0, ctlEnd
}

// mainReturned reports whether the exit being served is crt0's, after
// main returned: the function that called exit is the program's entry
// point (_start), not main or another function of the program.
func (k *Kernel) mainReturned() bool {
	st := k.stackAt(k.cpu.PC - 4)
	if len(st) < 2 {
		return false
	}
	name, _, ok := k.syms.FuncAt(st[1] - 4)
	entry, _, eok := k.syms.FuncAt(k.img.Entry)
	return ok && eok && name == entry
}

// killOthers records, in a program that ever had a second thread, that the
// current thread ends the program: the others alive run no more, and the
// exit is dependent with every step of another thread (package dpor: run
// before them, it cuts them off).
func (k *Kernel) killOthers() {
	if k.st.nextTID > 2 {
		k.syncEvent(record.SyncEvent{Kind: record.SyncKill, Arg: uint64(len(k.st.threads) - 1)})
	}
}

// sysHalt implements halt(): the process ends with status 0.
func sysHalt(k *Kernel, a args) (uint64, control) {
	k.killOthers()
	k.endProcess(0)
	return 0, ctlEnd
}
