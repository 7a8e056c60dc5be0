package kernel

import (
	"landslide/record"
)

// sysYield implements yield(tid): -1 yields to anyone; a tid that is not
// runnable is an error (Pebbles). Either way a successful yield is a PP.
func sysYield(k *Kernel, a args) (uint64, control) {
	tid := record.TID(a.int(0))
	k.st.yieldTo = 0
	if tid != -1 {
		// What it returns depends on tid's run state: the transition
		// does not commute with tid's deschedule, wake-up or exit.
		k.runState(tid, record.RunStateRead)
		t := k.find(tid)
		if t == nil || !t.canRun() {
			return errno(1), ctlContinue
		}
		k.st.yieldTo = tid
	}
	return 0, ctlPP(record.PPYield)
}

// sysDeschedule implements deschedule(&reject): atomically, if *reject is
// zero the thread blocks until make_runnable; otherwise it returns at once.
// The read of *reject is a shared access. Both cases are PPs.
func sysDeschedule(k *Kernel, a args) (uint64, control) {
	p := a.ptr(0)
	v, ok := k.mem.Read32(p)
	if !ok {
		return errno(1), ctlContinue
	}
	if k.cpu.Tracker != nil {
		// The reject word is read atomically with the deschedule: an
		// atomic access (it races with no other atomic one).
		k.kernelAccess(p, 4, false, false, k.cpu.PC-4)
	}
	if v == 0 {
		k.cur().state = stDescheduled
		k.syncEvent(record.SyncEvent{Kind: record.SyncBlock, Arg: p})
		k.runState(k.curTID(), record.RunStateChanged)
	}
	return 0, ctlPP(record.PPBlock)
}

// sysMakeRunnable implements make_runnable(tid): only a descheduled thread
// can be made runnable.
func sysMakeRunnable(k *Kernel, a args) (uint64, control) {
	tid := record.TID(a.int(0))
	t := k.find(tid)
	if t == nil || t.state != stDescheduled {
		// Run after tid's deschedule, it would have woken it.
		k.runState(tid, record.RunStateRead)
		return errno(1), ctlContinue
	}
	t.state = stRunnable
	k.syncEvent(record.SyncEvent{Kind: record.SyncUnblock, Other: t.tid})
	k.runState(tid, record.RunStateChanged)
	return 0, ctlPP(record.PPMakeRunnable)
}

// runState records that the current system call read or changed thread
// tid's run state (record.SyncRunState): the Pebbles calls that behave
// by another thread's state, and those that change it. (The pthread
// calls' waits are on objects whose accesses order them.)
func (k *Kernel) runState(tid record.TID, how uint64) {
	k.syncEvent(record.SyncEvent{Kind: record.SyncRunState, Other: tid, Arg: how})
}

// sysGetTicks implements get_ticks(): a deterministic clock.
func sysGetTicks(k *Kernel, a args) (uint64, control) { return k.now(), ctlContinue }

// sysSleep implements sleep(ticks). A sleeping thread counts as runnable
// (thesis §3.2: it only needs time to pass); choosing it advances the clock.
func sysSleep(k *Kernel, a args) (uint64, control) {
	n := a.int(0)
	if n < 0 {
		return errno(1), ctlContinue
	}
	if n == 0 {
		return 0, ctlContinue
	}
	t := k.cur()
	t.state = stSleeping
	t.wake = k.now() + uint64(n)
	return 0, ctlPP(record.PPSleep)
}

// sysPreempt implements tell_landslide_preempt(): a PP subject to the
// within/without filters.
func sysPreempt(k *Kernel, a args) (uint64, control) {
	if !k.withinOK(k.cpu.PC - 4) {
		return 0, ctlContinue
	}
	return 0, ctlPP(record.PPAnnotation)
}
