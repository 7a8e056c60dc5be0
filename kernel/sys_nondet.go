package kernel

import (
	"fmt"

	"landslide/record"
)

// __VERIFIER_nondet (the SV-COMP nondeterministic inputs, verifier.h):
// the call nondet(lo, hi) returns a value of [lo, hi] the explorer
// chooses. The thread stops at a PP before the call (PPNondet, with its
// preSync set, as before a pthread call). The value is chosen by the
// choice that ran the thread to that PP: its Choice.Value is the index of
// the value (0 is lo, the default run), kept with the thread until it
// makes the call. So the choice is made as early as it can be, where the
// thread arrives at the call: the transitions that differ only by the
// value touch the same memory, and the explorer branches over the values
// there (record.Valuer says how many). A one-value domain is no choice.
//
// A transition that starts at an _xbegin takes its Value as the abort
// status: a nondet call at its end returns lo.

// Sampled reports whether an execution this machine ran called a
// __VERIFIER_nondet function whose domain the build cut below its type's
// (verifier.c passes the flag as the call's third argument), or made a
// condition wait whose spurious wake-up it did not explore
// (spuriousWakeup): those
// explorations covered a sample of the values, and prove nothing for
// the others. It counts the machine's whole life, across restores; a
// machine resumed from a checkpoint counts from there.
func (k *Kernel) Sampled() bool { return k.sampled }

// MaxNondetValues bounds a nondet domain: every value is explored.
const MaxNondetValues = 4096

// nondetDomain is the domain of the nondet call thread t is stopped
// before: its first value and how many (n 0 if t is not stopped at one).
func (k *Kernel) nondetDomain(t *thread) (lo, n int64) {
	num, _ := k.pendingCall(t)
	switch {
	case num == SysNondet:
	case k.cfg.SVCOMP && (num == SysCondWait || num == SysCondTimedwait):
		if t.spurious {
			return 0, 1 // one spurious wake-up per thread (spuriousWakeup)
		}
		return 0, 2 // 1: a spurious wake-up (spuriousWakeup)
	default:
		return 0, 0
	}
	x := &t.regs
	if k.isCur(t) {
		x = &k.cpu.X
	}
	lo, hi := int64(x[10]), int64(x[11])
	return lo, hi - lo + 1
}

// spuriousWakeup reports whether the pthread_cond_wait the current
// thread makes returns at once, without a signal, as POSIX allows
// (value 1 of its choice; in SV-COMP mode, whose tasks count on it). A
// thread stopped before a wait takes two values there, as before a
// nondet call. Each thread takes at most one spurious wake-up in an
// execution, so that a wait in a loop does not make the state space
// infinite: a wait after it that could have been one marks the
// exploration as covering a sample (Sampled), so no verdict of "true"
// rests on it.
func (k *Kernel) spuriousWakeup() bool {
	t := k.cur()
	v := t.nondet
	t.nondet = 0
	switch {
	case !k.cfg.SVCOMP:
	case v == 1:
		t.spurious = true
	case t.spurious:
		k.sampled = true
	}
	return v == 1
}

// Values implements record.Valuer: the number of values of the nondet
// call thread tid is stopped before (whichever was chosen).
func (k *Kernel) Values(tid record.TID) int64 {
	if t := k.find(tid); t != nil && t.canRun() {
		_, n := k.nondetDomain(t)
		return n
	}
	return 0
}

// chooseNondet gives the nondet call that ended ch's transition (at pp)
// the value ch chose.
func (k *Kernel) chooseNondet(ch record.Choice, pp record.PP) error {
	t := k.find(ch.Thread)
	n := int64(0)
	if t != nil {
		if num, _ := k.pendingCall(t); pp.Kind == record.PPNondet || num == SysCondWait || num == SysCondTimedwait {
			_, n = k.nondetDomain(t)
		}
	}
	switch {
	case n == 0:
		return fmt.Errorf("choice %d:%d: thread %d is not at an _xbegin, and its transition ends at no nondet call: this choice takes no value (only a thread)", ch.Thread, ch.Value, ch.Thread)
	case ch.Value >= n:
		return fmt.Errorf("choice %d:%d: thread %d's transition ends at a nondet call of %d values (a value is an index, 0 to %d)", ch.Thread, ch.Value, ch.Thread, n, n-1)
	}
	t.nondet = ch.Value
	return nil
}

// nondetCall is the PP before a nondet call with more than one value
// (reporting a bad domain as a bug); when the thread runs again, the
// call proceeds with the chosen value (thread.nondet).
func (k *Kernel) nondetCall(pc uint64, name string) (record.PP, bool) {
	t := k.cur()
	if t.preSync {
		return k.stopBefore(pc, record.PPNondet, name) // the second time: the call runs
	}
	lo, hi := int64(k.cpu.X[10]), int64(k.cpu.X[11])
	if hi < lo || uint64(hi-lo) >= MaxNondetValues {
		k.bugAt(record.BugSyscall, fmt.Sprintf("%s: the domain [%d, %d] is not 1 to %d values", name, lo, hi, MaxNondetValues), pc, nil)
		return record.PP{Kind: record.PPEnd, PC: pc, Func: name}, true
	}
	if hi == lo {
		return record.PP{}, false
	}
	t.nondet = 0
	return k.stopBefore(pc, record.PPNondet, name)
}

// sysNondet returns the chosen value of the domain (lo with no choice).
func sysNondet(k *Kernel, a args) (uint64, control) {
	if a.u64(2) != 0 {
		k.sampled = true
	}
	t := k.cur()
	v := a.long(0) + t.nondet
	t.nondet = 0
	k.syncEvent(record.SyncEvent{Kind: record.SyncNondet, Arg: uint64(v), PC: k.cpu.PC - 4})
	return uint64(v), control{}
}
