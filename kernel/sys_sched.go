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
	}
	return 0, ctlPP(record.PPBlock)
}

// sysMakeRunnable implements make_runnable(tid): only a descheduled thread
// can be made runnable.
func sysMakeRunnable(k *Kernel, a args) (uint64, control) {
	t := k.find(record.TID(a.int(0)))
	if t == nil || t.state != stDescheduled {
		return errno(1), ctlContinue
	}
	t.state = stRunnable
	k.syncEvent(record.SyncEvent{Kind: record.SyncUnblock, Other: t.tid})
	return 0, ctlPP(record.PPMakeRunnable)
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
