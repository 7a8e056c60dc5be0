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
)

func (s threadState) String() string {
	return [...]string{"runnable", "descheduled", "sleeping"}[s]
}

// syncFrame is an active call of a known sync function.
type syncFrame struct {
	fn  string
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
	// [stackLo, stackHi) is the thread's own stack; its accesses there are
	// not shared. stackLo == stackHi means not yet known (thread_fork).
	stackLo, stackHi uint64
	// yields counts yields since the thread last did something
	// interesting (thesis §3.4.6 yield-loop heuristic).
	yields int
	// calls is never written in place (see enterFunc), so snapshots share it.
	calls []syncFrame
}

func (t *thread) canRun() bool { return t.state == stRunnable || t.state == stSleeping }
