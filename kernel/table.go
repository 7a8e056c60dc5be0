package kernel

import (
	"fmt"

	"landslide/record"
)

// control is what a system call asks of the kernel once it has run.
type control struct {
	pp       record.PPKind // a PP after the call (PPNone: keep running)
	end      bool          // the execution ended (exit, or a bug)
	noResult bool          // do not write a0 (the thread is gone)
}

var (
	ctlContinue = control{}
	ctlEnd      = control{end: true, noResult: true}
)

func ctlPP(k record.PPKind) control { return control{pp: k} }

// args gives typed access to a0..a5; sign extension is decided here only.
type args struct{ x *[33]uint64 }

func (a args) ptr(i int) uint64 { return a.x[10+i] }
func (a args) u64(i int) uint64 { return a.x[10+i] }
func (a args) int(i int) int32  { return int32(a.x[10+i]) } // C int
func (a args) long(i int) int64 { return int64(a.x[10+i]) }

type handler func(k *Kernel, a args) (uint64, control)

type sysEntry struct {
	name string
	fn   handler
	// pp: the call may end the transition, so its stack is taken before
	// it runs (the thread may be gone afterwards).
	pp bool
}

// syscalls is the system-call table (gVisor style: the table is data).
var syscalls = map[uint64]sysEntry{
	SysWrite:        {"write", sysWrite, false},
	SysExit:         {"exit", sysExit, true},
	SysExitGroup:    {"exit_group", sysExit, true},
	SysGettid:       {"gettid", sysGettid, false},
	SysYield:        {"yield", sysYield, true},
	SysDeschedule:   {"deschedule", sysDeschedule, true},
	SysMakeRunnable: {"make_runnable", sysMakeRunnable, true},
	SysGetTicks:     {"get_ticks", sysGetTicks, false},
	SysSleep:        {"sleep", sysSleep, true},
	SysThreadFork:   {"thread_fork", sysThreadFork, true},
	SysThreadCreate: {"thread_create", sysThreadCreate, true},
	SysVanish:       {"vanish", sysVanish, true},
	SysSetStatus:    {"set_status", sysSetStatus, false},
	SysTaskVanish:   {"task_vanish", sysExit, true},
	SysNewPages:     {"new_pages", sysNewPages, false},
	SysRemovePages:  {"remove_pages", sysRemovePages, false},
	SysPrint:        {"print", sysPrint, false},
	SysPanic:        {"panic", sysPanic, false},
	SysHalt:         {"halt", sysHalt, true},
	SysMalloc:       {"malloc", sysMalloc, false},
	SysCalloc:       {"calloc", sysCalloc, false},
	SysRealloc:      {"realloc", sysRealloc, false},
	SysFree:         {"free", sysFree, false},
	SysPreempt:      {"tell_landslide_preempt", sysPreempt, true},
	SysDumpStack:    {"tell_landslide_dump_stack", sysDumpStack, false},
	SysXbegin:       {"_xbegin", sysXbegin, true},
	SysXend:         {"_xend", sysXend, true},
	SysXabort:       {"_xabort", sysXabort, false},
	SysXtest:        {"_xtest", sysXtest, false},
}

// SyscallName names a system-call number ("" if unknown).
func SyscallName(n uint64) string { return syscalls[n].name }

// syscall serves the ecall at the current PC. It reports the PP that ends
// the transition, if any.
func (k *Kernel) syscall() (record.PP, bool) {
	pc := k.cpu.PC
	num := k.cpu.X[17]
	e, ok := syscalls[num]
	if !ok {
		k.bugHere(record.BugSyscall, fmt.Sprintf("unknown system call %d (a7) at 0x%x", int64(num), pc), nil)
		return record.PP{Kind: record.PPEnd, PC: pc}, true
	}
	if k.weakOwner() && (num == SysVanish || num == SysTaskVanish || num == SysExit) {
		k.bugHere(record.BugSyscall, fmt.Sprintf("%s inside a transaction: it never commits, and every other thread's _xbegin waits for it", e.name), nil)
		return record.PP{Kind: record.PPEnd, PC: pc}, true
	}
	if k.txn != nil && !allowedInTxn[num] {
		// A mode switch inside a transaction: the hardware aborts it
		// (the thesis's CAPACITY); the call never happens.
		k.selfAbort(k.abortStatus(record.XabortCapacity))
		return record.PP{}, false
	}
	var stack []uint64
	if e.pp {
		stack = k.stackAt(pc)
	}
	k.cpu.PC = pc + 4
	ret, ctl := e.fn(k, args{&k.cpu.X})
	if k.st.ended {
		return record.PP{Kind: record.PPEnd, PC: pc, Func: e.name}, true
	}
	if !ctl.noResult {
		k.cpu.X[10] = ret
	}
	if ctl.pp == record.PPNone {
		return record.PP{}, false
	}
	k.ppStack = stack
	return record.PP{Kind: ctl.pp, PC: pc, Func: e.name}, true
}
