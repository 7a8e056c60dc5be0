package kernel

import (
	"fmt"
	"slices"

	"landslide/emu/mem"
	"landslide/record"
)

// Transactional memory (Intel RTM through sdk's htm.h; thesis ch. 6).
//
// A transaction is atomic (the thesis's Thm 3): _xbegin is a PP
// (PPXbegin) at which the explorer chooses the thread's next step and,
// for that thread, _xbegin's result: Choice.Value 0 starts the
// transaction, a nonzero value is the abort status _xbegin returns at
// once (an injected abort). A started transaction runs to its _xend
// inside one transition, with no PP in between (configured PPs inside it
// are passed over), and the commit is a PP (PPXend). What a transaction
// does to itself is no choice: _xabort(code), or a system call (a mode
// switch, which the hardware may always abort), rolls the machine back
// to the _xbegin, which then returns the abort status, and the thread
// runs on into its failure path in the same transition. Nothing of the
// aborted body stays in the machine: memory, heap, registers. The
// transition keeps the body's reads, though, between its SyncTxnBegin and
// SyncTxnAbort: what the body read decided that it aborted (htm2's
// transaction aborts itself when it reads prevent_transactions raised),
// so another thread's write to those locations is a dependency DPOR must
// reverse, and for the race analysis the reads were made inside the
// transaction, under its global lock (Thm 4). Its writes, and its other
// sync events, never happened.
//
// Misuse is a bug: a nested _xbegin, _xend or _xabort outside a
// transaction.

// Semantics is the revision of what the machine records in a
// transition, which a stored exploration depends on: an exploration made
// under an earlier revision cannot be continued by this one (job's
// resume). 1: an aborted transaction keeps its reads (0: before). 2: a
// process exit in a program that had a second thread is a PP of its own
// and kills the others (record.SyncKill), a spinning thread is blocked by
// the spin-loop rule (spin.go) instead of the thesis's counters, accesses
// carry their C11 order and fences are sync events. 3: a data-race PP at
// an SC is one at its LR (no PP while the reservation is held), and
// with data-race PPs an execution may have 2^20 PPs. 4: a thread's
// accesses to its own stack where a pointer to it escaped order
// transitions (Transition.Own), and so do yield(tid) and a failed
// make_runnable(tid) with tid's blocking, waking and exit
// (record.SyncRunState).
const Semantics = 4

// HTMConfig configures transactional memory.
type HTMConfig struct {
	// AbortCodes distinguishes abort causes (the thesis's -A): _xabort
	// returns EXPLICIT with its code, a system call CAPACITY, an injected
	// conflict CONFLICT. Without it every abort returns RETRY, as the
	// thesis's -X does.
	AbortCodes bool
	// Weak gives transactions weak atomicity (the thesis's -W, weak.go):
	// they are atomic only with respect to each other, so PPs and system
	// calls inside them are kept and other threads' code interleaves
	// with their bodies.
	Weak bool
}

// txnState is the machine at the running thread's _xbegin, for a
// rollback; it lives only inside one Step (no PP is inside a
// transaction).
type txnState struct {
	mem    *mem.Snapshot
	regs   [33]uint64
	pc     uint64
	st     state
	nAcc   int
	nSync  int
	beginP uint64 // the _xbegin's ecall
}

// allowedInTxn are the system calls a transaction may make without
// aborting: they are library code on a real system (the heap), report a
// bug (panic), or belong to the transaction's own API.
var allowedInTxn = map[uint64]bool{
	SysMalloc: true, SysCalloc: true, SysRealloc: true, SysFree: true,
	SysPanic: true, SysXbegin: true, SysXend: true, SysXabort: true, SysXtest: true,
}

// AtXbegin implements record.XbeginWaiter: thread tid is stopped at an
// _xbegin, so its next choice gives _xbegin's result.
func (k *Kernel) AtXbegin(tid record.TID) bool {
	t := k.find(tid)
	return t != nil && t.atXbegin
}

// xbegin runs the _xbegin the current thread is stopped at, with the
// chosen result: 0 starts the transaction, anything else is the abort
// status it returns.
func (k *Kernel) xbegin(t *thread, value int64) {
	t.atXbegin = false
	pc := k.cpu.PC
	k.cpu.PC = pc + 4
	if value != 0 {
		k.cpu.X[10] = uint64(value)
		k.syncEvent(record.SyncEvent{Kind: record.SyncTxnAbort, Arg: uint64(value), PC: pc})
		return
	}
	if k.cfg.HTM.Weak {
		k.weakBegin(pc)
	} else {
		k.copies++
		k.txn = &txnState{mem: k.mem.Snapshot(), regs: k.cpu.X, pc: k.cpu.PC, st: k.st.cloneDeep(),
			nAcc: len(k.tr.Accesses), nSync: len(k.tr.Sync), beginP: pc}
	}
	k.cpu.X[10] = record.XbeginStarted
	k.syncEvent(record.SyncEvent{Kind: record.SyncTxnBegin, PC: pc})
}

// selfAbort rolls the running transaction back: _xbegin returns status.
func (k *Kernel) selfAbort(status uint64) {
	tx := k.txn
	k.txn = nil
	k.mem.Restore(tx.mem)
	k.cpu.X, k.cpu.PC = tx.regs, tx.pc
	k.cpu.ClearReservation()
	k.st = tx.st.clone()
	k.tr.Accesses = append(k.tr.Accesses[:tx.nAcc], abortedReads(k.tr.Accesses[tx.nAcc:], k.tr.Sync[tx.nSync:], tx.nSync+1)...)
	k.tr.Sync = k.tr.Sync[:tx.nSync+1] // up to the SyncTxnBegin
	k.seenFor = nil                    // the access index is rebuilt from what is left
	k.cpu.X[10] = status
	k.syncEvent(record.SyncEvent{Kind: record.SyncTxnAbort, Arg: status, PC: tx.beginP})
}

// abortedReads is what an aborted transaction's accesses (body) leave in
// its transition: its reads, an AMO's or SC's included as the read it
// made, each now just after the transaction's SyncTxnBegin (sync: the
// number of the transition's sync events up to and including it). Reads
// of heap blocks the body allocated itself (a SyncAlloc among events, the
// body's sync events) go too: the rollback unmade the block, and its
// Block and Gen go to the next allocation. It filters body in place.
func abortedReads(body []record.Access, events []record.SyncEvent, sync int) []record.Access {
	out := body[:0]
	for _, a := range body {
		if a.Write && !a.Atomic {
			continue
		}
		a.Write = false // an AMO or SC read the location; its write never happened
		if a.Block != 0 && slices.ContainsFunc(events, func(e record.SyncEvent) bool {
			return e.Kind == record.SyncAlloc && e.Block == a.Block && e.Gen == a.Gen
		}) {
			continue
		}
		a.Sync = uint32(sync)
		out = append(out, a)
	}
	return out
}

// abortStatus is the status of an abort of this cause, as the
// configuration distinguishes causes.
func (k *Kernel) abortStatus(cause uint64) uint64 {
	if k.cfg.HTM.AbortCodes {
		return cause
	}
	return record.XabortRetry
}

func sysXbegin(k *Kernel, a args) (uint64, control) {
	pc := k.cpu.PC - 4
	if k.inTxn() {
		k.bugAt(record.BugSyscall, "_xbegin inside a transaction: nested transactions are not supported", pc, nil)
		return 0, ctlEnd
	}
	// Stop before it: the explorer chooses its result (Step runs it).
	k.cpu.PC = pc
	k.cur().atXbegin = true
	return 0, control{pp: record.PPXbegin, noResult: true}
}

func sysXend(k *Kernel, a args) (uint64, control) {
	switch {
	case k.weakOwner():
		k.weakEnd()
	case k.txn != nil:
		k.txn = nil
	default:
		k.bugAt(record.BugSyscall, "_xend outside a transaction", k.cpu.PC-4, nil)
		return 0, ctlEnd
	}
	k.syncEvent(record.SyncEvent{Kind: record.SyncTxnEnd, PC: k.cpu.PC - 4})
	return 0, ctlPP(record.PPXend)
}

func sysXabort(k *Kernel, a args) (uint64, control) {
	code := uint8(a.u64(0))
	status := k.abortStatus(record.XabortExplicit | uint64(code)<<24)
	switch {
	case k.weakOwner():
		k.weakAbort(status)
	case k.txn != nil:
		k.selfAbort(status)
	default:
		k.bugAt(record.BugSyscall, fmt.Sprintf("_xabort(0x%x) outside a transaction", code), k.cpu.PC-4, nil)
		return 0, ctlEnd
	}
	return 0, control{noResult: true}
}

func sysXtest(k *Kernel, a args) (uint64, control) {
	if k.inTxn() {
		return 1, ctlContinue
	}
	return 0, ctlContinue
}
