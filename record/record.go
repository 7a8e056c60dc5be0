// Package record holds the data that crosses the seam between the machine
// (emulator + guest kernel) and everything that explores, stores or reports
// executions: choices, transitions, accesses, sync events and bugs, and the
// Machine interface itself. It imports nothing of the project, so a second
// front end (another ISA, or Go programs) can implement Machine.
//
// Vocabulary (thesis §2.5): a preemption point (PP) is a state where the
// checker may switch threads; a transition is what one thread executes
// between two PPs; a choice is the decision taken at a PP; an execution
// prefix (a list of choices) replayed on the same binary reproduces the
// execution exactly.
package record

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// TID identifies a guest thread. The first thread is 1.
type TID int32

// Choice is the decision at a PP: which thread runs next, and a value
// for the PPs that have several outcomes besides the thread.
//
// Value is 0 for a plain choice of thread. It is the seam for injected
// outcomes: for a thread at _xbegin (PPXbegin), a nonzero Value is the
// abort status _xbegin returns (XabortRetry, ...) instead of starting
// the transaction; for any other thread, a Value v is for the
// __VERIFIER_nondet call the transition ends at (PPNondet): the call will
// return the v-th value of its domain (Valuer). Value is part of everything that keeps or repeats choices:
// the text form (schedule.Format/Parse, "2:2" is thread 2 with value 2),
// the store's branch records, and replay. A machine rejects a choice
// with a value it does not offer (kernel.Step) rather than ignore it.
type Choice struct {
	Thread TID
	Value  int64
}

// PPKind says why a transition ended.
type PPKind uint8

// PP kinds. Mandatory PPs (voluntary switches) come first.
const (
	PPNone         PPKind = iota
	PPYield               // yield syscall
	PPBlock               // deschedule (blocking or not)
	PPCreate              // a thread was created (the parent is at the PP)
	PPExit                // the running thread exited (vanish)
	PPMakeRunnable        // make_runnable
	PPSleep               // sleep
	PPSyncFunc            // entry of a configured function (e.g. mutex_lock)
	PPDataRace            // a configured instruction address (data-race PP)
	PPAnnotation          // tell_landslide_preempt()
	PPEnd                 // not a PP: the execution ended (exit or bug)
	// Transactional memory (after PPEnd: the kinds are stored by number).
	PPXbegin // the thread is about to run _xbegin: its result is a choice (Choice.Value)
	PPXend   // the thread's transaction has just committed (_xend)
	// PPAccess: the thread is about to make a shared access, having made
	// one in this transition (every shared access a PP).
	PPAccess
	// PPNondet: the thread is about to make a __VERIFIER_nondet call,
	// whose value the choice that ran the transition chose (its
	// Choice.Value, an index in the declared domain; see Valuer).
	PPNondet
	// PPSpin: the thread came back to a state it was in within the
	// transition with nothing changed (a spin loop with no PP in it):
	// it waits, at that instruction, for another thread to write what it
	// reads (kernel's spin.go).
	PPSpin
	// PPExitCall: the thread is about to end the program (exit) in a
	// program with other threads: a PP of its own, as the end cuts off
	// those still alive (kernel's table.go).
	PPExitCall
)

var ppNames = [...]string{"none", "yield", "deschedule", "thread_create", "thread_exit",
	"make_runnable", "sleep", "sync_function", "data_race", "annotation", "end", "xbegin", "xend", "access", "nondet", "spin", "exit"}

func (k PPKind) String() string {
	if int(k) < len(ppNames) {
		return ppNames[k]
	}
	return fmt.Sprintf("pp%d", k)
}

// Mandatory reports whether PPs of this kind exist whatever the PP set.
func (k PPKind) Mandatory() bool { return k >= PPYield && k <= PPSleep }

// PP is the preemption point that ended a transition.
type PP struct {
	Kind PPKind
	PC   uint64
	// Func is the function whose entry this is (PPSyncFunc), or the
	// function holding PC.
	Func string
}

func (p PP) String() string {
	if p.Kind == PPSyncFunc {
		return p.Func
	}
	return p.Kind.String()
}

// Access is one shared-memory access (accesses of a thread to its own stack
// are not recorded).
type Access struct {
	Addr   uint64
	Size   uint8
	Write  bool
	Atomic bool // LR, SC or AMO, or a C11 atomic load or store; an AMO is recorded as a write
	// Acquire and Release are the access's C11 ordering: an acquire or
	// seq_cst load, a release or seq_cst store, the .aq and .rl bits of
	// LR, SC and AMOs (emu/cpu's markOrdered). A relaxed atomic has
	// neither.
	Acquire bool
	Release bool
	PC      uint64
	// Block and Gen identify the heap block (0 when not heap memory); Gen
	// counts allocations at the same address (reallocation rule).
	Block uint32
	Gen   uint32
	// Sync is how many of the transition's sync events came before this
	// access: it orders accesses against lock acquisitions and releases
	// (locksets, vector clocks) within one transition.
	Sync uint32
}

// SyncKind is the kind of a sync event.
type SyncKind uint8

// Sync event kinds.
const (
	SyncCreate  SyncKind = iota + 1 // the thread created Other
	SyncExit                        // the thread exited
	SyncBlock                       // the thread blocked (deschedule)
	SyncUnblock                     // the thread made Other runnable
	SyncEnter                       // entered Func with first argument Arg
	SyncReturn                      // returned from Func (Arg as at entry)
	SyncAlloc                       // allocated heap Block/Gen at Arg
	SyncFree                        // freed heap Block/Gen at Arg
	SyncOutput                      // wrote to the console (order matters)
	// Transactional memory: a transaction began (_xbegin returned
	// _XBEGIN_STARTED), committed (_xend), or aborted with status Arg
	// (injected at _xbegin, or by the transaction itself: _xabort, a
	// system call). A transaction is atomic: its begin, body and commit
	// are one transition, and an aborted one left nothing behind.
	SyncTxnBegin
	SyncTxnEnd
	SyncTxnAbort
	// SyncJoin: the thread joined thread Other, which had exited
	// (pthread_join): everything Other did happens before what follows.
	SyncJoin
	// SyncNondet: a __VERIFIER_nondet call returned Arg (as int64), the
	// value the choice that ran the thread to the call picked.
	SyncNondet
	// SyncOpCall and SyncOpReturn: a call of the test's shared object
	// (sdk's lineup.h) began, operation Op with argument Arg, or returned
	// result Arg. The linearizability checker reads them.
	SyncOpCall
	SyncOpReturn
	// SyncFence: a C11 fence (atomic_thread_fence) that is not part of an
	// atomic access's mapping; Arg holds FenceAcquire and/or FenceRelease.
	SyncFence
	// SyncKill: the thread ended the program (exit) with Arg other
	// threads alive, which run no more. The transition is dependent with
	// every transition of another thread (run before them, it would cut
	// them off), even when Arg is 0.
	SyncKill
	// SyncRunState: a Pebbles system call read thread Other's run state
	// and behaved by it (Arg RunStateRead: yield to it, a make_runnable
	// that found it awake), or changed it (RunStateChanged: deschedule,
	// a make_runnable that woke it, vanish, thread creation). Reads and
	// changes of one thread's run state conflict as memory accesses do.
	SyncRunState
)

// SyncRunState arguments.
const (
	RunStateRead    = 0
	RunStateChanged = 1
)

// SyncFence arguments.
const (
	FenceAcquire = 1 << 0
	FenceRelease = 1 << 1
)

var syncNames = [...]string{"", "create", "exit", "block", "unblock", "enter", "return", "alloc", "free", "output",
	"txn_begin", "txn_end", "txn_abort", "join", "nondet", "op_call", "op_return", "fence", "kill", "run_state"}

func (k SyncKind) String() string {
	if int(k) < len(syncNames) {
		return syncNames[k]
	}
	return fmt.Sprintf("sync%d", k)
}

// SyncEvent is a synchronisation-relevant event within a transition.
type SyncEvent struct {
	Kind SyncKind
	// Other is the thread created, made runnable or joined; for the
	// SyncEnter and SyncReturn of a lock it is TryLock when the lock was
	// taken by a call that never waits (pthread_mutex_trylock).
	Other TID
	Func  SyncFunc // SyncEnter, SyncReturn
	// Op is the operation of a SyncOpCall or SyncOpReturn.
	Op    string `msgpack:",omitempty"`
	Arg   uint64
	Block uint32
	Gen   uint32
	PC    uint64
}

// TryLock marks a lock taken by a call that never waits (SyncEvent.Other).
const TryLock TID = -1

// Transition is what one thread executed between two PPs.
type Transition struct {
	Thread TID
	// PP ended the transition; Stack is the thread's stack there (frame 0 is
	// the PC; outer frames are return addresses).
	PP           PP
	Stack        []uint64
	Accesses     []Access
	Sync         []SyncEvent
	Instructions uint64
	// Own are the thread's accesses to its own stack in a call frame a
	// pointer into which another thread could have read (the kernel's
	// exposure rule): they order transitions as any shared access does,
	// but are no race candidates (the thesis leaves a thread's own stack
	// out of race detection), and are events only with every shared
	// access a PP.
	Own []Access
}

// Hash returns a digest of everything in the transitions, in order. Equal
// hashes across runs are the determinism check.
func Hash(ts []*Transition) [32]byte {
	h := sha256.New()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	for _, t := range ts {
		put(uint64(t.Thread))
		put(uint64(t.PP.Kind))
		put(t.PP.PC)
		h.Write([]byte(t.PP.Func))
		put(uint64(len(t.Stack)))
		for _, pc := range t.Stack {
			put(pc)
		}
		put(uint64(len(t.Accesses)))
		for _, a := range t.Accesses {
			put(a.Addr)
			put(uint64(a.Size) | b2u(a.Write)<<8 | b2u(a.Atomic)<<9 | b2u(a.Acquire)<<10 | b2u(a.Release)<<11 | uint64(a.Block)<<16)
			put(a.PC)
			put(uint64(a.Gen) | uint64(a.Sync)<<32)
		}
		if len(t.Own) > 0 {
			put(uint64(len(t.Own)))
			for _, a := range t.Own {
				put(a.Addr)
				put(uint64(a.Size) | b2u(a.Write)<<8 | b2u(a.Atomic)<<9 | a.PC<<16)
			}
		}
		put(uint64(len(t.Sync)))
		for _, s := range t.Sync {
			put(uint64(s.Kind) | uint64(uint32(s.Other))<<8)
			h.Write([]byte(s.Func.String()))
			if s.Op != "" {
				h.Write([]byte(s.Op))
			}
			put(s.Arg)
			put(uint64(s.Block)<<32 | uint64(s.Gen))
			put(s.PC)
		}
		put(t.Instructions)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// BugKind classifies a guest bug.
type BugKind uint8

// Bug kinds.
const (
	BugAssert        BugKind = iota + 1 // assertion failure or panic
	BugMemory                           // invalid memory access
	BugHeap                             // use-after-free, double/invalid free, overflow
	BugDeadlock                         // every live thread blocked
	BugLoop                             // infinite loop heuristic
	BugIllegal                          // illegal instruction
	BugMisaligned                       // misaligned atomic or jump target
	BugStackOverflow                    // access just beyond a thread's stack
	BugLimit                            // a checker limit (threads, memory, output), not a bug: see Bug.IsLimit
	BugSyscall                          // unknown or misused system call
	// BugLinearizability: the calls of a linearizability test (sdk's
	// lineup.h) had results no order of them explains.
	BugLinearizability
	// BugReachError: the program called reach_error or
	// __VERIFIER_error, SV-COMP's violation of unreach-call (kernel
	// Config.SVCOMP).
	BugReachError
)

var bugNames = [...]string{"", "assert", "memory", "heap", "deadlock", "loop",
	"illegal_instruction", "misaligned", "stack_overflow", "limit", "syscall", "linearizability", "reach_error"}

func (k BugKind) String() string {
	if int(k) < len(bugNames) {
		return bugNames[k]
	}
	return fmt.Sprintf("bug%d", k)
}

// ParseBugKind is the inverse of BugKind.String.
func ParseBugKind(s string) (BugKind, bool) {
	for i, n := range bugNames {
		if n == s && i > 0 {
			return BugKind(i), true
		}
	}
	return 0, false
}

// Detail is a titled part of a bug report: a stack (allocation, free, a
// blocked thread's position) and/or a line of text.
type Detail struct {
	Title  string
	Thread TID
	Stack  []uint64
	Text   string
}

// Bug is a failure of the guest program. It is a value, never a Go error:
// finding one is the checker working.
type Bug struct {
	Kind    BugKind
	Message string
	Thread  TID
	PC      uint64
	Stack   []uint64
	Details []Detail
}

// IsLimit reports whether b is a checker limit (BugLimit): the execution
// went past a limit of the checker (live threads, guest memory, output),
// which is no failure of the program. The machine ends the execution
// there and reports it through Machine.Ended like a bug, so that the
// seam stays one call; every layer above takes it for what it is: the
// exploration stops (dpor.StopCheckerLimit), nothing is stored as a
// bug, and the verdict is "limit" (exit 3), never "bug".
func (b *Bug) IsLimit() bool { return b != nil && b.Kind == BugLimit }

func (b *Bug) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %s (thread %d, pc 0x%x)", b.Kind, b.Message, b.Thread, b.PC)
	return sb.String()
}

// Machine is the explorer's view of an execution. The explorer knows
// nothing of the ISA; the machine knows nothing of exploration.
//
// Protocol: while !Ended(), pick a Choice whose Thread is in Runnable() and
// call Step. Snapshot may be taken at any PP (between Steps) and restored
// later any number of times; restoring puts the machine exactly in the
// state it had, including output and heap.
type Machine interface {
	// Runnable lists, ascending, the threads that may run at this PP.
	Runnable() []TID
	// Default is the choice an ordinary scheduler would make here: the
	// current thread if it can go on, the next thread after a yield.
	Default() Choice
	// Step runs the chosen thread to the next PP (or the end) and returns
	// the transition. An error means the choice was invalid.
	Step(Choice) (*Transition, error)
	// Ended reports whether the execution is over and the bug, if any.
	Ended() (bool, *Bug)
	Snapshot() Snapshot
	Restore(Snapshot)
}

// Releaser is an optional interface of a Machine: Release(s) declares
// that s, the snapshots taken after it of states made from it, and those
// states (the current one too) will never be used again, so that the
// machine may reuse what only they reached. A search calls it for the
// nodes it pops, after restoring an ancestor.
type Releaser interface {
	Release(Snapshot)
}

// ScratchStepper is an optional interface of a Machine: StepScratch is
// Step for a caller that reads the transition only until its next call
// of Step or StepScratch (a re-run that wants what a transition touched):
// the machine may return the same Transition, its slices reused, every
// time. The transition is otherwise Step's, but for its Stack, which the
// machine may leave out.
type ScratchStepper interface {
	StepScratch(Choice) (*Transition, error)
}

// LockWaiter is an optional interface of a Machine whose threads can be
// unable to run because their next step takes a lock another thread
// holds (the kernel's pthread mutexes): LockWait says which lock (by its
// address, the Arg of the lock's SyncEnter/SyncReturn events). The
// explorer uses it to reverse the acquisition that stopped the thread,
// which a thread that never ran its lock cannot reveal otherwise.
type LockWaiter interface {
	LockWait(t TID) (lock uint64, ok bool)
}

// Blocker is an optional interface of a Machine: Blocked says whether the
// execution, which has ended without a bug, was infeasible (a thread was
// stopped by __VERIFIER_assume(0)): it is counted apart from the
// interleavings, as Nidhugg and GenMC count assume-blocked executions,
// and its end state is no state of the program.
type Blocker interface {
	Blocked() bool
}

// XbeginWaiter is an optional interface of a Machine with transactions:
// AtXbegin says whether thread t is stopped at an _xbegin (its last
// transition ended at PPXbegin), where a choice of t may carry an abort
// status (Choice.Value). Random walks (schedule.Random) draw one there.
type XbeginWaiter interface {
	AtXbegin(t TID) bool
}

// Valuer is an optional interface of a Machine whose threads can stop at
// a nondet call (PPNondet): Values is how many values the call thread t
// is stopped before has (0 for none), whichever the choice that ran t
// there took (0..n-1, 0 the default). An explorer asks it after that
// choice and explores the other values as siblings of it (the "variants"
// of the transition: the thread's own nondeterminism, independent of the
// other threads).
type Valuer interface {
	Values(t TID) int64
}

// ErrBudget is returned by Machine.Step when one execution's instruction
// budget is spent without a bug: the branch ends unfinished.
var ErrBudget = errors.New("instruction budget exhausted")

// Snapshot is an opaque, immutable machine state.
type Snapshot interface{}
