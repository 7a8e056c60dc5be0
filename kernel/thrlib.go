package kernel

import (
	"fmt"

	"landslide/record"
)

// The SDK's reference thread library as events (Config.ModelThreads).
//
// With every shared access a PP (Nidhugg's and GenMC's model, where
// thread creation, exit and join are primitive events), a P2 program
// linked with the SDK's reference library would otherwise explore the
// library's own thread table, locks and exit hand-off: thousands of
// interleavings of code that is not the program's. So when the binary
// says its library is the reference one (the directive
// ReferenceThreadsDirective, which only sdk/thrlib/thread.c carries), the
// kernel runs thr_create, thr_join and thr_exit itself, as the pthread
// calls they are (sys_pthread.go): a PP before each call, the call one
// event, and the function returns to its caller without running its
// body. The child of thr_create starts at the function with its argument
// and returns into thr_exit. thr_init runs as written; it also makes the
// calling thread joinable, as the library's main tcb does.
//
// The results are the library's: thr_create returns the new thread's
// id or a negative number; thr_join returns 0, or a negative number for
// a thread that is not joinable (never made, already joined or being
// joined, or itself), where pthread_join would be a bug. The threads'
// stacks are the kernel's (PthreadStackSize), not thr_init's size.
//
// In the thesis's PP sets (sync functions, data-race PPs) the library
// runs as the code it is: its internals are part of what the thesis's
// figures explored, and a student's library is the code under test.

// ReferenceThreadsDirective is the LANDSLIDE_CONFIG directive of the
// SDK's reference thread library (sdk/thrlib/thread.c): its thr_create,
// thr_join and thr_exit are the ones this file models.
const ReferenceThreadsDirective = "reference_thread_library"

// thrError is what a modelled call returns on failure: -1, as the
// library's do.
const thrError = ^uint64(0)

// thrCalls are the modelled functions: the pthread call each behaves as
// (its number is what pendingCall reports while the thread waits at the
// PP before it) and its handler.
var thrCalls = map[record.SyncFunc]struct {
	num uint64
	e   sysEntry
}{
	record.ThrCreate: {SysPthreadCreate, sysEntry{"thr_create", thrCreate, true, true, false}},
	record.ThrJoin:   {SysPthreadJoin, sysEntry{"thr_join", thrJoin, true, true, false}},
	record.ThrExit:   {SysPthreadExit, sysEntry{"thr_exit", sysPthreadExit, true, true, false}},
}

// modelThreads arms the modelled functions (New, with ModelThreads).
func (k *Kernel) modelThreads() error {
	k.thrFuncs = map[uint64]record.SyncFunc{}
	for _, fn := range []record.SyncFunc{record.ThrCreate, record.ThrJoin, record.ThrExit, record.ThrInit} {
		addr, _, ok := k.syms.Lookup(fn.String())
		if !ok {
			return fmt.Errorf("the reference thread library's %s is not in the program", fn)
		}
		k.thrFuncs[addr] = fn
		k.cpu.SetBreakpoint(addr)
		if fn == record.ThrExit {
			k.thrExit = addr
		}
	}
	return nil
}

// thrInit notes a call of thr_init, which otherwise runs as written: the
// calling thread becomes joinable.
func (k *Kernel) thrInit() {
	if tid := k.curTID(); k.pthread(tid) == nil {
		k.setPthreads(func(ps []pthreadRec) []pthreadRec { return append(ps, pthreadRec{tid: tid}) })
	}
}

// thrCall handles the entry of a modelled function at pc (not thr_init).
// It reports the PP that ends the transition, if any.
func (k *Kernel) thrCall(pc uint64, fn record.SyncFunc) (record.PP, bool) {
	c := thrCalls[fn]
	// a7 is the call's number while the thread waits at the PP before it
	// (pendingCall, callBlocked); a function may clobber a7.
	k.cpu.X[17] = c.num
	return k.call(pc, c.num, c.e, k.cpu.X[1])
}

// thrCreate is thr_create(func, arg): the child runs func(arg) and
// returns into thr_exit.
func thrCreate(k *Kernel, a args) (uint64, control) {
	fn, arg := a.ptr(0), a.u64(1)
	if !k.code(fn) {
		return thrError, ctlContinue
	}
	tid, _, ctl := k.spawn(fn, arg, 0, k.thrExit)
	if tid == 0 {
		if ctl.end {
			return 0, ctl
		}
		return thrError, ctlContinue
	}
	return uint64(tid), ctlPP(record.PPCreate)
}

// thrJoin is thr_join(tid, statusp).
func thrJoin(k *Kernel, a args) (uint64, control) {
	tid, statusp := record.TID(a.int(0)), a.ptr(1)
	p := k.pthread(tid)
	if p == nil || p.detached || tid == k.curTID() {
		return thrError, ctlContinue
	}
	if _, ok := k.joining(tid); ok {
		return thrError, ctlContinue
	}
	return k.join(p, statusp, "thr_join")
}

// joinName is the join function thread t waits in: thr_join where it
// stopped at the modelled one's entry, else pthread_join.
func (k *Kernel) joinName(t *thread) string {
	pc := t.pc
	if k.isCur(t) {
		pc = k.cpu.PC
	}
	if k.thrFuncs[pc] == record.ThrJoin {
		return "thr_join"
	}
	return "pthread_join"
}

// threadBottom cuts a stack at the return into thr_exit that a modelled
// thr_create gives its child: that frame is no call (it would show as the
// function before thr_exit), and the thread's start function is its
// bottom.
func (k *Kernel) threadBottom(pcs []uint64) []uint64 {
	if k.thrExit == 0 {
		return pcs
	}
	for i := 1; i < len(pcs); i++ {
		if pcs[i] == k.thrExit {
			return pcs[:i]
		}
	}
	return pcs
}
