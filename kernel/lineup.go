package kernel

import (
	"fmt"

	"landslide/record"
)

// Linearizability checking (sdk's lineup.h) and declared waits (await.h).
//
// lineup_call(op, arg) and lineup_return(result) mark a call of the
// test's shared object: each is a sync event of the thread's transition
// (record.SyncOpCall with the operation's name and argument,
// record.SyncOpReturn with the result), which the linearizability checker
// reads from the explored branch. A return ends its transition with a PP
// (PPAnnotation, "lineup_return"), so that what the thread does next is
// not part of the call. The harness's rules are checked here, each broken
// one a bug naming it: at most LineupMaxCalls calls in an execution, by
// at most LineupMaxThreads threads, names of at most LineupMaxName bytes,
// one call at a time per thread, returned before the thread exits. A
// call and a return are progress for the loop heuristics (thesis §3.4.6):
// a lock-free operation's atomics do not add up across calls into a
// "spin on atomics" that would block the thread.
//
// With Config.LineupSerial (learning the sequential specification),
// lineup_sequential() returns 1, a call has no PP inside it (its thread
// goes on past every PP until it returns, unless it blocks or must choose
// a value), so a call runs whole within one transition, and each call
// writes a virtual location (LineupOrderAddr), so that every two calls
// conflict and a reduced exploration still runs the calls in every
// order. (Making the other threads not runnable during a call instead
// hides the order's conflicts behind the disabling it adds to the
// scheduling happens-before: DPOR then missed orders.)
//
// await_eq(p, v) is a system call preceded by a PP, like a pthread call:
// the thread cannot run while the value at p differs from v (callBlocked),
// and when it runs the call reads p (an access that orders it after the
// write it waited for).

// The harness's limits (lineup.h's LINEUP_MAX_*).
const (
	LineupMaxCalls   = 64
	LineupMaxThreads = 16
	LineupMaxName    = 31
)

// LineupOrderAddr is the virtual location every call writes when the
// calls run one at a time (in the null guard: no program access is
// there).
const LineupOrderAddr = 0x100

// lineupState is a thread's part in the harness.
type lineupState struct {
	op   string // the open call's operation ("" when none is open)
	open bool
	made bool // the thread made a call in this execution
}

func sysLineupCall(k *Kernel, a args) (uint64, control) {
	t := k.cur()
	name, ok := k.mem.ReadString(a.ptr(0), LineupMaxName+1)
	switch {
	case !ok:
		k.bugHere(record.BugSyscall, fmt.Sprintf("lineup_call: the operation name at 0x%x is not readable", a.ptr(0)), nil)
		return 0, ctlEnd
	case len(name) > LineupMaxName || name == "":
		k.bugHere(record.BugSyscall, fmt.Sprintf("lineup_call: operation name %q: want 1 to %d characters", trimName(name), LineupMaxName), nil)
		return 0, ctlEnd
	case t.lineup.open:
		k.bugHere(record.BugSyscall, fmt.Sprintf("lineup_call: thread %d calls %s while its call %s has not returned (call lineup_return first)", t.tid, name, t.lineup.op), nil)
		return 0, ctlEnd
	case k.st.lineupCalls >= LineupMaxCalls:
		k.bugHere(record.BugSyscall, fmt.Sprintf("lineup_call: more than %d calls in one execution (LINEUP_MAX_CALLS)", LineupMaxCalls), nil)
		return 0, ctlEnd
	}
	if !t.lineup.made {
		if k.st.lineupThreads >= LineupMaxThreads {
			k.bugHere(record.BugSyscall, fmt.Sprintf("lineup_call: more than %d threads make calls (LINEUP_MAX_THREADS)", LineupMaxThreads), nil)
			return 0, ctlEnd
		}
		k.st.lineupThreads++
	}
	k.st.lineupCalls++
	t.lineup = lineupState{op: name, open: true, made: true}
	t.yields, t.atomics = 0, 0 // a call is progress for the loop heuristics (§3.4.6)
	k.syncEvent(record.SyncEvent{Kind: record.SyncOpCall, Op: name, Arg: a.u64(1), PC: k.cpu.PC - 4})
	if k.cfg.LineupSerial && k.tr != nil {
		k.tr.Accesses = append(k.tr.Accesses, record.Access{Addr: LineupOrderAddr, Size: 8, Write: true, PC: k.cpu.PC - 4, Sync: uint32(len(k.tr.Sync))})
	}
	return 0, ctlContinue
}

func sysLineupReturn(k *Kernel, a args) (uint64, control) {
	t := k.cur()
	if !t.lineup.open {
		k.bugHere(record.BugSyscall, fmt.Sprintf("lineup_return: thread %d has no call to return from (call lineup_call first)", t.tid), nil)
		return 0, ctlEnd
	}
	k.syncEvent(record.SyncEvent{Kind: record.SyncOpReturn, Op: t.lineup.op, Arg: a.u64(0), PC: k.cpu.PC - 4})
	t.lineup.open, t.lineup.op = false, ""
	t.yields, t.atomics = 0, 0
	return 0, ctlPP(record.PPAnnotation)
}

func sysLineupMode(k *Kernel, a args) (uint64, control) {
	if k.cfg.LineupSerial {
		return 1, ctlContinue
	}
	return 0, ctlContinue
}

// lineupExit checks that an exiting thread has no open call.
func (k *Kernel) lineupExit(t *thread) {
	if t != nil && t.lineup.open {
		k.bugHere(record.BugSyscall, fmt.Sprintf("lineup: thread %d exited during its call %s, which never returned (lineup_return)", t.tid, t.lineup.op), nil)
	}
}

// serialGoesOn reports whether, with the calls one at a time, the
// running thread goes on past the PP it stopped at: it is inside a call
// and can go on without a choice.
func (k *Kernel) serialGoesOn(pp record.PP) bool {
	if !k.cfg.LineupSerial || k.st.ended || pp.Kind == record.PPEnd || pp.Kind == record.PPNondet || pp.Kind == record.PPXbegin {
		return false
	}
	t := k.cur()
	return t != nil && t.lineup.open && t.canRun() && !t.hblocked && !t.atXbegin && !k.callBlocked(t) && !k.waitsForTxn(t)
}

func trimName(s string) string {
	if len(s) > LineupMaxName {
		return s[:LineupMaxName] + "..."
	}
	return s
}

// sysAwait runs await_eq once the value is there (callBlocked held the
// thread until then): it reads it.
func sysAwait(k *Kernel, a args) (uint64, control) {
	addr, size := a.ptr(0), a.u64(1)
	if !awaitSize(size) {
		k.bugHere(record.BugSyscall, fmt.Sprintf("await_eq: size %d: want 1, 2, 4 or 8 bytes", size), nil)
		return 0, ctlEnd
	}
	if _, ok := k.awaitValue(addr, size); !ok {
		k.bugHere(record.BugSyscall, fmt.Sprintf("await_eq: 0x%x is not readable", addr), nil)
		return 0, ctlEnd
	}
	if k.cpu.Tracker != nil {
		k.kernelAccess(addr, uint8(size), false, false, k.cpu.PC-4)
	}
	return 0, ctlContinue
}

func awaitSize(n uint64) bool { return n == 1 || n == 2 || n == 4 || n == 8 }

// awaitValue reads the size-byte value at addr.
func (k *Kernel) awaitValue(addr, size uint64) (uint64, bool) {
	var b [8]byte
	if !awaitSize(size) || k.mem.ReadBytes(addr, b[:size]) != nil {
		return 0, false
	}
	var v uint64
	for i := int(size) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, true
}

// awaitBlocked reports whether t, stopped before an await_eq, must wait:
// the value differs (a bad address or size lets it run, to report it).
func (k *Kernel) awaitBlocked(t *thread) bool {
	x := &t.regs
	if k.isCur(t) {
		x = &k.cpu.X
	}
	size := x[11]
	v, ok := k.awaitValue(x[10], size)
	if !ok {
		return false
	}
	want := x[12]
	if size < 8 {
		want &= 1<<(8*size) - 1
	}
	return v != want
}
