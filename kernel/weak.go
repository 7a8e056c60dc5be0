package kernel

import (
	"fmt"
	"landslide/emu/cpu"

	"landslide/record"
)

// Weak atomicity (HTMConfig.Weak, the thesis's -W; §6.2.4 and Thm 5).
//
// Under an STM's weak atomicity only transactions conflict with each
// other: code outside a transaction may run, and see and change memory,
// in the middle of one. So a transaction here spans preemption points
// (the configured PPs inside it stop it as anywhere else) and may make
// system calls; other threads' non-transactional code interleaves with
// its body. Transactions stay atomic with respect to each other (Thm 5:
// every intervening event of an equivalent interleaving is
// non-transactional): while one is in flight, a thread at an _xbegin
// waits, as for one global lock. An explicit _xabort undoes the
// transaction's own writes with the values each location had before the
// transaction first wrote it (eager versioning with an undo log), and
// returns the thread's registers to the _xbegin; what other threads
// wrote meanwhile stays.

// weakTxn is the transaction in flight under weak atomicity. It belongs
// to the state (snapshots share it): it is replaced, never changed in
// place.
type weakTxn struct {
	tid     record.TID
	regs    [33]uint64 // at the _xbegin (a0 becomes the abort status), which returns into pc
	pc      uint64
	beginPC uint64 // the _xbegin's ecall
	calls   int    // the thread's sync frames at the _xbegin
	undo    []undoEntry
}

// undoEntry is a location the transaction wrote and its value before.
type undoEntry struct {
	addr uint64
	old  []byte
}

// MaxUndo bounds a weak transaction's undo log (locations written).
const MaxUndo = 1 << 16

// weakOwner reports whether the running thread has a weak transaction in
// flight.
func (k *Kernel) weakOwner() bool {
	return k.st.wtx != nil && k.st.cur >= 0 && k.st.wtx.tid == k.st.threads[k.st.cur].tid
}

// waitsForTxn reports whether t is at an _xbegin while another thread's
// weak transaction is in flight: it cannot start its own until that one
// ends (Runnable leaves it out), but it may abort (a conflict with the
// transaction in flight; an injected choice with a Value).
func (k *Kernel) waitsForTxn(t *thread) bool {
	return t.atXbegin && k.st.wtx != nil && k.st.wtx.tid != t.tid
}

// inTxn reports whether the running thread is inside a transaction.
func (k *Kernel) inTxn() bool { return k.txn != nil || k.weakOwner() }

// weakBegin starts a weak transaction for the running thread, whose
// _xbegin (at beginPC) returns into the current pc.
func (k *Kernel) weakBegin(beginPC uint64) {
	t := k.cur()
	k.st.wtx = &weakTxn{tid: t.tid, regs: k.cpu.X, pc: k.cpu.PC, beginPC: beginPC, calls: len(t.calls)}
	k.preStep = k.mem.Snapshot()
	k.txnLockAccess(beginPC)
}

// noteWeakWrite logs the old value of a location the transaction is about
// to have written (the memory before this transition holds it; a
// location written earlier in the transaction is logged already).
func (k *Kernel) noteWeakWrite(addr uint64, size uint8) {
	tx := k.st.wtx
	for _, e := range tx.undo {
		if e.addr == addr && len(e.old) == int(size) {
			return
		}
	}
	if len(tx.undo) >= MaxUndo {
		return // bounded; weakAbort reports it
	}
	old := make([]byte, size)
	if k.preStep.ReadBytes(addr, old) != nil {
		return
	}
	c := *tx
	c.undo = append(tx.undo[:len(tx.undo):len(tx.undo)], undoEntry{addr, old})
	k.st.wtx = &c
}

// weakEnd commits the running thread's weak transaction.
func (k *Kernel) weakEnd() {
	k.st.wtx = nil
	k.preStep = nil
}

// txnLockAccess records the access to record.TxnLockAddr with which a
// weak transaction begins. As with the acquisitions of a lock, the
// begins conflict with each other and not with the ends: DPOR then
// reverses two transactions at the first one's _xbegin, the last point
// at which the second can begin first.
func (k *Kernel) txnLockAccess(pc uint64) {
	k.tr.Accesses = append(k.tr.Accesses, record.Access{Addr: record.TxnLockAddr, Size: 8, Write: true, Atomic: true, PC: pc, Sync: uint32(len(k.tr.Sync))})
}

// weakAbort rolls the running thread's weak transaction back: its writes
// are undone, newest first, and _xbegin returns status.
func (k *Kernel) weakAbort(status uint64) {
	tx := k.st.wtx
	k.st.wtx, k.preStep = nil, nil
	if len(tx.undo) >= MaxUndo {
		k.bugAt(record.BugSyscall, fmt.Sprintf("a transaction wrote more than %d locations: its rollback would be incomplete", MaxUndo), tx.beginPC, nil)
		return
	}
	for i := len(tx.undo) - 1; i >= 0; i-- {
		e := tx.undo[i]
		if err := k.mem.WriteBytes(e.addr, e.old); err == nil {
			k.Access(e.addr, uint8(len(e.old)), cpu.AccWrite|cpu.AccChanged, tx.beginPC)
		}
	}
	k.cpu.X, k.cpu.PC = tx.regs, tx.pc
	k.cpu.ClearReservation()
	k.cpu.X[10] = status
	if t := k.cur(); len(t.calls) > tx.calls {
		t.calls = t.calls[:tx.calls:tx.calls] // the sync calls it was inside never return
	}
	k.syncEvent(record.SyncEvent{Kind: record.SyncTxnAbort, Arg: status, PC: tx.beginPC})
}
