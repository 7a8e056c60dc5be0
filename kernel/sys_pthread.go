package kernel

import (
	"fmt"
	"slices"

	"landslide/emu/mem"
	"landslide/record"
)

// POSIX threads (sdk's pthread.h): thread creation, exit and join, and
// mutexes and condition variables, are system calls, so that each is one
// sync event of the model and not the shared accesses of a library. A
// mutex is the int at its address (0 free, else the owner's tid); a
// condition variable is only its address. Each call is preceded by a PP
// (a sync-function PP named after the call) and, with EveryAccess, is its
// transition's event. A thread that must wait (join, lock) blocks and
// runs the call again when woken, so a blocked attempt changes nothing;
// a condition wait releases the mutex, blocks, and returns when signalled
// (the SDK's wrapper then locks the mutex again).
//
// What POSIX leaves undefined is a bug with the usual trace: joining a
// thread twice or one detached or never created, unlocking a mutex the
// thread does not hold, destroying a locked mutex, relocking a mutex the
// thread holds (a self-deadlock), waiting with a mutex not held.

// Kernel-allocated pthread stacks: thread tid's is at PthreadStackBase +
// tid × PthreadStackStride, PthreadStackSize bytes, the rest of the
// stride a guard.
const (
	PthreadStackBase   = 0x40_0000_0000
	PthreadStackStride = 1 << 20
	PthreadStackSize   = 256 << 10
)

// errno values the calls return (Linux's).
const (
	eBusy     = 16
	eAgain    = 11
	eInval    = 22
	eDeadlk   = 35
	eTimedOut = 110
)

// waitKind is what a stWaiting thread waits for (thread.waitOn says which).
type waitKind uint8

const (
	waitNone   waitKind = iota
	waitJoin            // the thread waitOn to exit
	waitMutex           // the mutex at waitOn to be unlocked
	waitCond            // a signal on the condition variable at waitOn
	waitTimed           // the same, in pthread_cond_timedwait: it may time out
	waitAssume          // nothing: __VERIFIER_assume(0) stopped it for good
)

// pthreadRec is a thread that pthread_create made and no join has reaped.
type pthreadRec struct {
	tid      record.TID
	ret      uint64
	exited   bool
	detached bool
}

// syncCall runs before a pthread call: a PP before it (stopBefore). In
// SV-COMP mode the one before a condition wait is a nondet call's, whose
// choice takes two values: the second a spurious wake-up
// (spuriousWakeup).
func (k *Kernel) syncCall(pc, num uint64, name string) (record.PP, bool) {
	if k.cfg.SVCOMP && (num == SysCondWait || num == SysCondTimedwait) {
		return k.stopBefore(pc, record.PPNondet, name)
	}
	return k.stopBefore(pc, record.PPSyncFunc, name)
}

// stopBefore: the first time the running thread reaches the call at pc,
// it ends the transition with a PP of this kind before the call (the
// thread re-executes the ecall when it next runs, preSync set); the
// second time it lets the call run.
func (k *Kernel) stopBefore(pc uint64, kind record.PPKind, name string) (record.PP, bool) {
	t := k.cur()
	if t.preSync {
		t.preSync = false
		return record.PP{}, false
	}
	t.preSync = true
	k.ppStack = k.ppStackAt(pc)
	return record.PP{Kind: kind, PC: pc, Func: name}, true
}

// pendingCall is the pthread call a thread stopped at the PP before it
// will make (0 if none), and its first argument.
func (k *Kernel) pendingCall(t *thread) (num, a0 uint64) {
	if !t.preSync {
		return 0, 0
	}
	x := &t.regs
	if k.isCur(t) {
		x = &k.cpu.X
	}
	return x[17], x[10]
}

// callBlocked reports whether t's pending call cannot run now: a lock of
// a mutex another thread holds, a join of a thread that has not exited.
// Such a thread is not runnable (Runnable) until the owner unlocks or the
// thread exits, so a lock or join is one event, as in Nidhugg's model,
// never a failed attempt.
func (k *Kernel) callBlocked(t *thread) bool {
	num, a0 := k.pendingCall(t)
	switch num {
	case SysMutexLock:
		v, ok := k.mem.Read32(a0)
		return ok && v != 0 && record.TID(int32(v)) != t.tid
	case SysPthreadJoin:
		p := k.pthread(record.TID(int32(a0)))
		return p != nil && !p.exited && !p.detached && p.tid != t.tid
	case SysAwait:
		return k.awaitBlocked(t)
	}
	return false
}

// LockWait implements record.LockWaiter: the mutex a thread that cannot
// run waits to lock.
func (k *Kernel) LockWait(tid record.TID) (uint64, bool) {
	t := k.find(tid)
	if t == nil || !k.callBlocked(t) {
		return 0, false
	}
	num, a0 := k.pendingCall(t)
	return a0, num == SysMutexLock
}

// posixWait says what a thread blocked in a pthread call waits for ("" if
// it is not).
func (k *Kernel) posixWait(t *thread) string {
	if k.callBlocked(t) {
		num, a0 := k.pendingCall(t)
		switch num {
		case SysPthreadJoin:
			return fmt.Sprintf("waits in %s for thread %d to exit", k.joinName(t), a0)
		case SysAwait:
			x := &t.regs
			if k.isCur(t) {
				x = &k.cpu.X
			}
			v, _ := k.awaitValue(a0, x[11])
			return fmt.Sprintf("waits in await_eq(0x%x) for the value %d (it is %d)", a0, int64(x[12]), int64(v))
		}
		v, _ := k.mem.Read32(a0)
		return fmt.Sprintf("waits in pthread_mutex_lock(0x%x), held by thread %d", a0, int32(v))
	}
	if t.state != stWaiting {
		return ""
	}
	switch t.waitKind {
	case waitJoin:
		return fmt.Sprintf("waits in %s for thread %d to exit", k.joinName(t), t.waitOn)
	case waitMutex:
		return fmt.Sprintf("waits in pthread_mutex_lock(0x%x)", t.waitOn)
	case waitCond, waitTimed:
		return fmt.Sprintf("waits in pthread_cond_wait(0x%x) for a signal", t.waitOn)
	}
	return "is stopped by __VERIFIER_assume(0)"
}

// wait blocks the current thread on (kind, on). With retry the thread
// runs the call again when woken.
func (k *Kernel) wait(kind waitKind, on uint64, retry bool) (uint64, control) {
	t := k.cur()
	t.state, t.waitKind, t.waitOn = stWaiting, kind, on
	k.syncEvent(record.SyncEvent{Kind: record.SyncBlock, Arg: on})
	if retry {
		k.cpu.PC -= 4
		t.preSync = true
		return 0, control{pp: record.PPBlock, noResult: true}
	}
	return 0, ctlPP(record.PPBlock)
}

// wake makes the threads waiting on (kind, on) runnable: all of them, or
// only the first (lowest tid).
func (k *Kernel) wake(on uint64, all bool, kinds ...waitKind) {
	for i, t := range k.st.threads {
		if t.state != stWaiting || t.waitOn != on || !slices.Contains(kinds, t.waitKind) {
			continue
		}
		t = k.own(i)
		t.state, t.waitKind, t.waitOn = stRunnable, waitNone, 0
		k.syncEvent(record.SyncEvent{Kind: record.SyncUnblock, Other: t.tid})
		if !all {
			return
		}
	}
}

// timeOut wakes the first thread in pthread_cond_timedwait with
// ETIMEDOUT; the kernel calls it when no thread can run (a timed wait
// times out rather than deadlock). It reports whether it woke one.
func (k *Kernel) timeOut() bool {
	for i, t := range k.st.threads {
		if t.state == stWaiting && t.waitKind == waitTimed {
			t = k.own(i)
			t.state, t.waitKind, t.waitOn = stRunnable, waitNone, 0
			t.regs[10] = eTimedOut
			return true
		}
	}
	return false
}

// sysAssumeFalse implements __VERIFIER_assume(0): the path is
// infeasible, the thread waits for good. The other threads go on (as in
// Nidhugg and GenMC: the execution stays a maximal one, and a bug they
// reach is reached in a feasible execution too, with the assume moved
// after it), and the execution ends blocked (Blocked).
func sysAssumeFalse(k *Kernel, a args) (uint64, control) {
	if k.cfg.SVCOMP {
		return k.svcompEnd()
	}
	return k.wait(waitAssume, 0, true)
}

// infeasible ends the execution when no thread can run and one is
// stopped by __VERIFIER_assume(0): the path is not a real one, and not a
// deadlock. It reports whether it did.
func (k *Kernel) infeasible() bool {
	if k.assumeStopped() {
		k.endProcess(k.st.status)
		return true
	}
	return false
}

// assumeStopped reports whether a thread is stopped by
// __VERIFIER_assume(0).
func (k *Kernel) assumeStopped() bool {
	for _, t := range k.st.threads {
		if t.state == stWaiting && t.waitKind == waitAssume {
			return true
		}
	}
	return false
}

// Blocked implements record.Blocker: the execution ended without a bug
// with a thread stopped by __VERIFIER_assume(0).
func (k *Kernel) Blocked() bool { return k.st.ended && k.st.bug == nil && k.assumeStopped() }

func (k *Kernel) pthread(tid record.TID) *pthreadRec {
	for i := range k.st.pthreads {
		if k.st.pthreads[i].tid == tid {
			return &k.st.pthreads[i]
		}
	}
	return nil
}

// setPthreads updates the records: f edits a slice of its own, the
// live one where no copy of the state was taken since it was made
// (snapshots share the slice), a copy otherwise.
func (k *Kernel) setPthreads(f func(ps []pthreadRec) []pthreadRec) {
	ps := k.st.pthreads
	if k.st.pthreadsMade != k.copies {
		ps = slices.Clone(ps)
	}
	k.st.pthreads, k.st.pthreadsMade = f(ps), k.copies
}

// writable reports whether the guest may write size bytes at addr.
func (k *Kernel) writable(addr, size uint64) bool {
	for a := addr &^ (PageSize - 1); a < addr+size; a += PageSize {
		if p, ok := k.mem.PermAt(a); !ok || p&mem.PermW == 0 {
			return false
		}
	}
	return addr != 0
}

// misuse ends the execution with a bug for a call POSIX leaves undefined.
func (k *Kernel) misuse(kind record.BugKind, format string, args ...any) (uint64, control) {
	k.bugHere(kind, fmt.Sprintf(format, args...), nil)
	return 0, ctlEnd
}

// sysPthreadCreate implements pthread_create's core: (tidp, start, fn,
// arg); the new thread runs start(fn, arg) (the SDK's trampoline, which
// calls pthread_exit with fn's result) on a stack of its own.
func sysPthreadCreate(k *Kernel, a args) (uint64, control) {
	tidp, start, fn, arg := a.ptr(0), a.ptr(1), a.ptr(2), a.u64(3)
	if !k.code(start) {
		return errno(-eInval), ctlContinue
	}
	if !k.writable(tidp, 8) {
		return k.misuse(record.BugMemory, "pthread_create: the pthread_t pointer 0x%x is not writable memory", tidp)
	}
	tid, fail, ctl := k.spawn(start, fn, arg, 0)
	if tid == 0 {
		return fail, ctl
	}
	k.mem.Write64(tidp, uint64(tid))
	return 0, ctlPP(record.PPCreate)
}

// code reports whether pc can start a thread: an aligned executable address.
func (k *Kernel) code(pc uint64) bool {
	p, ok := k.mem.PermAt(pc)
	return ok && p&mem.PermX != 0 && pc&3 == 0
}

// spawn starts a joinable thread at pc with a0, a1 and ra on a stack the
// kernel maps (pthread_create's core, and the modelled thr_create's). It
// returns the new thread, or 0 with what the call returns: EAGAIN when no
// stack can be mapped, or the end of the execution at a checker limit.
func (k *Kernel) spawn(pc, a0, a1, ra uint64) (record.TID, uint64, control) {
	k.expose(a0)
	k.expose(a1)
	base := PthreadStackBase + uint64(k.st.nextTID)*PthreadStackStride
	if base+PthreadStackStride > mem.Limit || k.mem.AnyMapped(base, PthreadStackSize) {
		return 0, errno(-eAgain), ctlContinue
	}
	if len(k.st.threads) >= k.cfg.MaxThreads {
		k.threadLimit()
		return 0, 0, ctlEnd
	}
	if k.memoryUsed()+PthreadStackSize > k.cfg.MaxMemory {
		k.memoryLimit(fmt.Sprintf("a thread's stack (%s)", SizeText(PthreadStackSize)))
		return 0, 0, ctlEnd
	}
	if err := k.mem.Map(base, PthreadStackSize, mem.PermR|mem.PermW); err != nil {
		return 0, errno(-eAgain), ctlContinue
	}
	// Its own thread-local storage at the top of its stack, the stack
	// below it (tls.go).
	sp, err := k.tlsBlock(base + PthreadStackSize)
	if err != nil {
		k.mem.Unmap(base, PthreadStackSize)
		return 0, errno(-eAgain), ctlContinue
	}
	k.addRegion(region{base, PthreadStackSize})
	t := thread{pc: pc, stackLo: base, stackHi: base + PthreadStackSize}
	t.regs[1], t.regs[2] = ra, sp
	t.regs[3], t.regs[4] = k.cpu.X[3], k.cpu.X[4] // gp, tp
	if k.img.TLS != nil {
		t.regs[4] = sp
	}
	t.regs[10], t.regs[11] = a0, a1
	tid, ok := k.newThread(t)
	if !ok {
		return 0, 0, ctlEnd
	}
	k.setPthreads(func(ps []pthreadRec) []pthreadRec { return append(ps, pthreadRec{tid: tid}) })
	return tid, 0, control{}
}

// sysPthreadExit implements pthread_exit(ret): the thread's joiner gets
// ret.
func sysPthreadExit(k *Kernel, a args) (uint64, control) {
	tid := k.curTID()
	if p := k.pthread(tid); p != nil {
		ret, detached := a.u64(0), p.detached
		k.setPthreads(func(ps []pthreadRec) []pthreadRec {
			if detached {
				return slices.DeleteFunc(ps, func(r pthreadRec) bool { return r.tid == tid })
			}
			for i := range ps {
				if ps[i].tid == tid {
					ps[i].exited, ps[i].ret = true, ret
				}
			}
			return ps
		})
		k.wake(uint64(tid), true, waitJoin)
	}
	return sysVanish(k, a)
}

// sysPthreadJoin implements pthread_join(tid, retp).
func sysPthreadJoin(k *Kernel, a args) (uint64, control) {
	tid, retp := record.TID(a.int(0)), a.ptr(1)
	if tid == k.curTID() {
		return errno(-eDeadlk), ctlContinue
	}
	p := k.pthread(tid)
	switch {
	case p == nil:
		return k.misuse(record.BugSyscall, "pthread_join(%d): no joinable thread %d (already joined, or never created by pthread_create): undefined in POSIX", tid, tid)
	case p.detached:
		return k.misuse(record.BugSyscall, "pthread_join(%d): thread %d is detached: undefined in POSIX", tid, tid)
	}
	if u, ok := k.joining(tid); ok {
		return k.misuse(record.BugSyscall, "pthread_join(%d): thread %d is already joining thread %d: undefined in POSIX", tid, u, tid)
	}
	return k.join(p, retp, "pthread_join")
}

// join completes a join of joinable thread p (call: the function, for
// the message): it waits for p to exit, then stores its result at retp
// (unless 0) and reaps it.
func (k *Kernel) join(p *pthreadRec, retp uint64, call string) (uint64, control) {
	tid := p.tid
	if !p.exited {
		return k.wait(waitJoin, uint64(tid), true)
	}
	if retp != 0 {
		if !k.writable(retp, 8) {
			return k.misuse(record.BugMemory, "%s(%d): the result pointer 0x%x is not writable memory", call, tid, retp)
		}
		k.mem.Write64(retp, p.ret)
	}
	k.setPthreads(func(ps []pthreadRec) []pthreadRec {
		return slices.DeleteFunc(ps, func(r pthreadRec) bool { return r.tid == tid })
	})
	k.syncEvent(record.SyncEvent{Kind: record.SyncJoin, Other: tid})
	return 0, ctlContinue
}

// joining reports whether some thread waits to join tid.
func (k *Kernel) joining(tid record.TID) (record.TID, bool) {
	for _, u := range k.st.threads {
		if u.state == stWaiting && u.waitKind == waitJoin && u.waitOn == uint64(tid) {
			return u.tid, true
		}
	}
	return 0, false
}

// sysPthreadDetach implements pthread_detach(tid).
func sysPthreadDetach(k *Kernel, a args) (uint64, control) {
	tid := record.TID(a.int(0))
	p := k.pthread(tid)
	if p == nil || p.detached {
		return k.misuse(record.BugSyscall, "pthread_detach(%d): no joinable thread %d: undefined in POSIX", tid, tid)
	}
	exited := p.exited
	k.setPthreads(func(ps []pthreadRec) []pthreadRec {
		if exited {
			return slices.DeleteFunc(ps, func(r pthreadRec) bool { return r.tid == tid })
		}
		for i := range ps {
			if ps[i].tid == tid {
				ps[i].detached = true
			}
		}
		return ps
	})
	return 0, ctlContinue
}

// mutexOwner reads the mutex at m, or reports a memory bug.
func (k *Kernel) mutexOwner(m uint64, call string) (record.TID, bool) {
	if m&3 != 0 || !k.writable(m, 4) {
		k.bugHere(record.BugMemory, fmt.Sprintf("%s: 0x%x is not a mutex (not aligned writable memory)", call, m), nil)
		return 0, false
	}
	v, _ := k.mem.Read32(m)
	return record.TID(int32(v)), true
}

// setMutex writes the mutex's owner, as one atomic write of the mutex
// word inside the call (for the race analysis: a mutex_lock or
// mutex_unlock of the P2 API; a trylock's are marked record.TryLock).
func (k *Kernel) setMutex(m uint64, owner record.TID, fn record.SyncFunc, try bool) {
	pc := k.cpu.PC - 4
	var other record.TID
	if try {
		other = record.TryLock
	}
	k.syncEvent(record.SyncEvent{Kind: record.SyncEnter, Func: fn, Arg: m, PC: pc, Other: other})
	old, _ := k.mem.Read32(m)
	k.mem.Write32(m, uint32(owner))
	k.kernelAccess(m, 4, true, old != uint32(owner), pc)
	k.syncEvent(record.SyncEvent{Kind: record.SyncReturn, Func: fn, Arg: m, PC: pc, Other: other})
	if owner == 0 {
		k.wake(m, true, waitMutex)
	}
}

func mutexLock(k *Kernel, a args, try bool) (uint64, control) {
	call := "pthread_mutex_lock"
	if try {
		call = "pthread_mutex_trylock"
	}
	m := a.ptr(0)
	owner, ok := k.mutexOwner(m, call)
	switch {
	case !ok:
		return 0, ctlEnd
	case owner == k.curTID() && !try:
		return k.misuse(record.BugDeadlock, "%s(0x%x): thread %d already holds this mutex: it waits for itself forever", call, m, owner)
	case owner != 0:
		k.kernelAccess(m, 4, false, false, k.cpu.PC-4)
		if try {
			return errno(-eBusy), ctlContinue
		}
		return k.wait(waitMutex, m, true)
	}
	k.setMutex(m, k.curTID(), record.MutexLock, try)
	return 0, ctlContinue
}

func sysMutexLock(k *Kernel, a args) (uint64, control)    { return mutexLock(k, a, false) }
func sysMutexTrylock(k *Kernel, a args) (uint64, control) { return mutexLock(k, a, true) }

// sysMutexUnlock implements pthread_mutex_unlock(m).
func sysMutexUnlock(k *Kernel, a args) (uint64, control) {
	m := a.ptr(0)
	owner, ok := k.mutexOwner(m, "pthread_mutex_unlock")
	if !ok {
		return 0, ctlEnd
	}
	if owner != k.curTID() {
		return k.misuse(record.BugSyscall, "pthread_mutex_unlock(0x%x): thread %d does not hold this mutex (%s): undefined in POSIX", m, k.curTID(), ownerText(owner))
	}
	k.setMutex(m, 0, record.MutexUnlock, false)
	return 0, ctlContinue
}

func ownerText(owner record.TID) string {
	if owner == 0 {
		return "it is unlocked"
	}
	return fmt.Sprintf("thread %d holds it", owner)
}

// sysMutexDestroy implements pthread_mutex_destroy(m).
func sysMutexDestroy(k *Kernel, a args) (uint64, control) {
	m := a.ptr(0)
	owner, ok := k.mutexOwner(m, "pthread_mutex_destroy")
	if !ok {
		return 0, ctlEnd
	}
	if owner != 0 {
		return k.misuse(record.BugSyscall, "pthread_mutex_destroy(0x%x): the mutex is locked (%s): undefined in POSIX", m, ownerText(owner))
	}
	k.kernelAccess(m, 4, true, true, k.cpu.PC-4)
	return 0, ctlContinue
}

// condWait implements pthread_cond_wait(c, m) up to the wake-up: it
// releases m and blocks until a signal (or, timed, a time-out).
func condWait(k *Kernel, a args, timed bool) (uint64, control) {
	c, m := a.ptr(0), a.ptr(1)
	call := "pthread_cond_wait"
	if timed {
		call = "pthread_cond_timedwait"
	}
	if c == 0 || !k.writable(c, 4) {
		return k.misuse(record.BugMemory, "%s: 0x%x is not a condition variable (not writable memory)", call, c)
	}
	owner, ok := k.mutexOwner(m, call)
	if !ok {
		return 0, ctlEnd
	}
	if owner != k.curTID() {
		return k.misuse(record.BugSyscall, "%s(0x%x, 0x%x): thread %d does not hold the mutex (%s): undefined in POSIX", call, c, m, k.curTID(), ownerText(owner))
	}
	k.kernelAccess(c, 4, true, true, k.cpu.PC-4)
	k.setMutex(m, 0, record.MutexUnlock, false)
	if k.spuriousWakeup() {
		return 0, ctlContinue
	}
	kind := waitCond
	if timed {
		kind = waitTimed
	}
	return k.wait(kind, c, false)
}

func sysCondWait(k *Kernel, a args) (uint64, control)      { return condWait(k, a, false) }
func sysCondTimedwait(k *Kernel, a args) (uint64, control) { return condWait(k, a, true) }

func condSignal(k *Kernel, a args, all bool) (uint64, control) {
	c := a.ptr(0)
	if c == 0 || !k.writable(c, 4) {
		return k.misuse(record.BugMemory, "pthread_cond_signal: 0x%x is not a condition variable (not writable memory)", c)
	}
	k.kernelAccess(c, 4, true, true, k.cpu.PC-4)
	k.wake(c, all, waitCond, waitTimed)
	return 0, ctlContinue
}

func sysCondSignal(k *Kernel, a args) (uint64, control)    { return condSignal(k, a, false) }
func sysCondBroadcast(k *Kernel, a args) (uint64, control) { return condSignal(k, a, true) }

// addRegion records a mapped region (new_pages, a pthread stack).
func (k *Kernel) addRegion(r region) {
	i := slices.IndexFunc(k.st.regions, func(q region) bool { return q.base > r.base })
	if i < 0 {
		i = len(k.st.regions)
	}
	k.st.regions = slices.Insert(slices.Clone(k.st.regions), i, r)
}
