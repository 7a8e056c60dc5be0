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
	// sync: a pthread call, preceded by a PP (syncCall) and, with
	// EveryAccess, its transition's one event.
	sync bool
	// exit: the call ends the process; with other threads alive it is
	// preceded by a PP as a sync call is.
	exit bool
}

// syscalls is the system-call table (gVisor style: the table is data).
var syscalls = map[uint64]sysEntry{
	SysWrite:        {"write", sysWrite, false, false, false},
	SysExit:         {"exit", sysExit, true, false, true},
	SysExitGroup:    {"exit_group", sysExit, true, false, true},
	SysGettid:       {"gettid", sysGettid, false, false, false},
	SysYield:        {"yield", sysYield, true, false, false},
	SysDeschedule:   {"deschedule", sysDeschedule, true, false, false},
	SysMakeRunnable: {"make_runnable", sysMakeRunnable, true, false, false},
	SysGetTicks:     {"get_ticks", sysGetTicks, false, false, false},
	SysSleep:        {"sleep", sysSleep, true, false, false},
	SysThreadFork:   {"thread_fork", sysThreadFork, true, false, false},
	SysThreadCreate: {"thread_create", sysThreadCreate, true, false, false},
	SysVanish:       {"vanish", sysVanish, true, false, false},
	SysSetStatus:    {"set_status", sysSetStatus, false, false, false},
	SysTaskVanish:   {"task_vanish", sysExit, true, false, true},
	SysNewPages:     {"new_pages", sysNewPages, false, false, false},
	SysRemovePages:  {"remove_pages", sysRemovePages, false, false, false},
	SysPrint:        {"print", sysPrint, false, false, false},
	SysPanic:        {"panic", sysPanic, false, false, false},
	SysHalt:         {"halt", sysHalt, true, false, true},
	SysMalloc:       {"malloc", sysMalloc, false, false, false},
	SysCalloc:       {"calloc", sysCalloc, false, false, false},
	SysRealloc:      {"realloc", sysRealloc, false, false, false},
	SysFree:         {"free", sysFree, false, false, false},
	SysPreempt:      {"tell_landslide_preempt", sysPreempt, true, false, false},
	SysDumpStack:    {"tell_landslide_dump_stack", sysDumpStack, false, false, false},
	SysXbegin:       {"_xbegin", sysXbegin, true, false, false},
	SysXend:         {"_xend", sysXend, true, false, false},
	SysXabort:       {"_xabort", sysXabort, false, false, false},
	SysXtest:        {"_xtest", sysXtest, false, false, false},

	SysPthreadCreate: {"pthread_create", sysPthreadCreate, true, true, false},
	SysPthreadExit:   {"pthread_exit", sysPthreadExit, true, true, false},
	SysPthreadJoin:   {"pthread_join", sysPthreadJoin, true, true, false},
	SysPthreadDetach: {"pthread_detach", sysPthreadDetach, false, true, false},
	SysMutexLock:     {"pthread_mutex_lock", sysMutexLock, true, true, false},
	SysMutexTrylock:  {"pthread_mutex_trylock", sysMutexTrylock, false, true, false},
	SysMutexUnlock:   {"pthread_mutex_unlock", sysMutexUnlock, false, true, false},
	SysMutexDestroy:  {"pthread_mutex_destroy", sysMutexDestroy, false, true, false},
	SysCondWait:      {"pthread_cond_wait", sysCondWait, true, true, false},
	SysCondTimedwait: {"pthread_cond_timedwait", sysCondTimedwait, true, true, false},
	SysCondSignal:    {"pthread_cond_signal", sysCondSignal, false, true, false},
	SysCondBroadcast: {"pthread_cond_broadcast", sysCondBroadcast, false, true, false},
	SysAssumeFalse:   {"__VERIFIER_assume", sysAssumeFalse, true, false, false},
	SysNondet:        {"__VERIFIER_nondet", sysNondet, true, false, false},
	SysLineupCall:    {"lineup_call", sysLineupCall, false, false, false},
	SysLineupReturn:  {"lineup_return", sysLineupReturn, true, false, false},
	SysLineupMode:    {"lineup_sequential", sysLineupMode, false, false, false},
	SysAwait:         {"await_eq", sysAwait, true, true, false},
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
	return k.call(pc, num, e, 0)
}

// call runs system call num (its entry e) for the instruction at pc.
// ret, if not 0, is where the thread goes on when the call returns, in
// place of the instruction after pc: the return address of a library
// function the kernel runs as this call (thrlib.go).
func (k *Kernel) call(pc, num uint64, e sysEntry, ret uint64) (record.PP, bool) {
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
	if t := k.cur(); t != nil && !spinPure(num) {
		t.spinDirty = true // a system call is progress (spin.go)
	}
	if num == SysNondet {
		if pp, stop := k.nondetCall(pc, e.name); stop {
			return pp, true
		}
	}
	if (e.exit || k.svcompEnds(num)) && k.st.nextTID > 2 {
		// A process exit ends the threads still alive: it is an event of
		// its own, after which nothing of theirs runs, so it gets a PP
		// before it (mandatory: no filter applies). In every program
		// that ever had a second thread, whether or not one is left when
		// the thread reaches the call: an exit that other threads' steps
		// can be ordered around must be the same transition whatever
		// they did (the same Mazurkiewicz trace).
		if pp, stop := k.stopBefore(pc, record.PPExitCall, e.name); stop {
			return pp, true
		}
		k.evented = true
	}
	if e.sync {
		if pp, stop := k.syncCall(pc, num, e.name); stop {
			return pp, true
		}
		k.evented = true // with EveryAccess, the call is the event
	}
	var stack []uint64
	if e.pp {
		stack = k.stackAt(pc)
	}
	k.cpu.PC = pc + 4
	res, ctl := e.fn(k, args{&k.cpu.X})
	if t := k.cur(); e.sync && t != nil {
		// A pthread call is progress for the loop heuristics (§3.4.6):
		// its waits are modelled exactly, so its mutex accesses are no
		// spin on atomics.
		t.yields, t.atomics = 0, 0
	}
	if k.st.ended {
		return record.PP{Kind: record.PPEnd, PC: pc, Func: e.name}, true
	}
	if !ctl.noResult {
		k.cpu.X[10] = res
	}
	if ret != 0 && k.cpu.PC == pc+4 {
		k.cpu.PC = ret // the call returned (a wait moves the thread back to pc)
	}
	if ctl.pp == record.PPNone {
		return record.PP{}, false
	}
	k.ppStack = stack
	return record.PP{Kind: ctl.pp, PC: pc, Func: e.name}, true
}
