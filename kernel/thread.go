package kernel

import (
	"landslide/record"
)

// threadState is a thread's run state.
type threadState uint8

const (
	stRunnable    threadState = iota
	stDescheduled             // deschedule()d, waiting for make_runnable
	stSleeping                // sleep(): runnable, but the clock must reach wake
	stWaiting                 // blocked in a pthread call (waitKind, waitOn)
)

func (s threadState) String() string {
	return [...]string{"runnable", "descheduled", "sleeping", "waiting"}[s]
}

// syncFrame is an active call of a known sync function.
type syncFrame struct {
	fn  record.SyncFunc
	arg uint64
	ret uint64 // return address
	sp  uint64 // sp at entry: the return is when pc == ret and sp == this
}

// thread is one guest thread. Registers live here only while the thread is
// not on the CPU.
type thread struct {
	tid   record.TID
	regs  [33]uint64
	pc    uint64
	state threadState
	wake  uint64 // for stSleeping: the tick to wake at
	// atBreak: the thread stopped at a breakpoint PP and must execute that
	// instruction when it next runs.
	atBreak bool
	// atXbegin: the thread stopped at the ecall of an _xbegin (PPXbegin);
	// the choice that runs it next gives _xbegin's result (see htm.go).
	atXbegin bool
	// [stackLo, stackHi) is the thread's own stack; its accesses there are
	// not shared. stackLo == stackHi means not yet known (thread_fork).
	stackLo, stackHi uint64
	// exposed are the parts of the stack (8-aligned, sorted, disjoint)
	// that a pointer another thread could read pointed into (stored to
	// shared memory, passed to a new thread): the whole call frame the
	// pointer pointed into, as its object lies within it (from the
	// pointer up to the stack's top where the frame is not known). There
	// the thread's own accesses order transitions (record.Transition.Own).
	// The slice is replaced, never written in place (snapshots share it).
	exposed []waitRange
	// yields counts yields since the thread last did something
	// interesting (thesis §3.4.6 yield-loop heuristic).
	yields int
	// calls is never written in place (see enterFunc), so snapshots share it.
	calls []syncFrame
	// atomics counts atomic accesses since the last interesting activity
	// (thesis §3.4.6: xchg loops with PPs in between).
	atomics int
	// hblocked: the thread is heuristically blocked (a yield or xchg loop,
	// or a yield inside mutex_lock) until another thread writes one of
	// the wait ranges, or every thread is stuck (false-positive deadlock
	// avoidance). The slice is replaced, never written in place.
	hblocked bool
	wait     []waitRange
	// spinning: hblocked by the spin-loop rule (spin.go) at spinPC.
	spinning bool
	spinPC   uint64
	// spin is the thread's spin window (spin.go), newest state first;
	// spinDirty: its transition in progress changed shared memory, or it
	// was woken, so the window starts over at its next PP.
	spin      *spinNode
	spinDirty bool
	// waitMutex: blocked by a yield inside mutex_lock(waitMutex), until
	// some thread returns from mutex_unlock of it.
	waitMutex uint64
	// POSIX threads (sys_pthread.go): what a stWaiting thread waits for,
	// and preSync: the thread is stopped at the PP before a pthread call,
	// which it makes when it next runs.
	waitKind waitKind
	waitOn   uint64
	preSync  bool
	// nondet: for a thread stopped before a nondet call (PPNondet), the
	// index of the value the call returns (sys_nondet.go).
	nondet int64
	// lineup: the thread's calls of a linearizability test (lineup.go).
	lineup lineupState
	// atomic: the depth of SV-COMP atomic sections the thread is in
	// (svcomp.go); atomicFrames the pending returns that change it. The
	// slice is replaced, never written in place.
	atomic       int32
	atomicFrames []atomicFrame
	// spurious: the thread took its spurious wake-up (spuriousWakeup).
	spurious bool
	// gen is the Kernel's epoch when this copy was made for the live
	// state: at any other epoch a snapshot may share it (Kernel.own).
	gen uint64
}

// waitRange is memory a heuristically blocked thread waits on.
type waitRange struct{ lo, hi uint64 }

func (t *thread) canRun() bool { return t.state == stRunnable || t.state == stSleeping }

// schedulable: runnable and not heuristically blocked.
func (t *thread) schedulable() bool { return t.canRun() && !t.hblocked }

// inFunc reports whether the thread is inside the sync function, and its
// first argument.
func (t *thread) inFunc(fn record.SyncFunc) (uint64, bool) {
	for i := len(t.calls) - 1; i >= 0; i-- {
		if t.calls[i].fn == fn {
			return t.calls[i].arg, true
		}
	}
	return 0, false
}
