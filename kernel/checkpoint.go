package kernel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"landslide/emu/mem"
	"landslide/record"
)

// CheckpointVersion is the first byte of Checkpoint.State.
//
// A checkpoint is a snapshot (record.Snapshot) outside the process. State
// holds everything but page contents, in this order, integers as varints
// (encoding/binary: unsigned for addresses, counts and counters, zigzag for
// TIDs, cur and the exit status), booleans as one byte 0 or 1, strings and
// lists as a count followed by their elements:
//
//	version byte, then the first 8 bytes of the SHA-256 of the Config (with
//	  its defaults filled in): it must be the Config of the decoding kernel
//	cpu: pc, instret, x0..x31 and the x0 sink (33 registers)
//	page table: runs of consecutive pages with one permission, each as
//	  (pages since the end of the previous run, pages, permission byte)
//	threads, ascending TID: tid, pc, 33 registers, state byte (0x80 set:
//	  stopped at an _xbegin), wake,
//	  atBreak, stack bounds, yields, atomics, sync frames (function name,
//	  argument, return address, sp), hblocked, wait ranges, waitMutex
//	scheduler: cur, nextTID, clock, status, ended, pps, lastPP byte,
//	  yieldTo, sumInstr, nTrans, lastExited, stuck, yieldStreak, streakTID,
//	  work; with Config.HTM.Weak, the weak transaction in flight: present,
//	  then its thread, pc, 33 registers, the _xbegin's pc, the thread's
//	  sync-frame depth there and the undo log (address, old bytes)
//	output: 0 for none, else its length + 1 and the bytes (the outNode list
//	  flattened; it decodes as one node)
//	bug: present, then kind byte, message, thread, pc, stack, details
//	  (title, thread, stack, text)
//	diagnostics
//	heap: the rounded size of each slot (bounds, brk and the mapped arena
//	  follow from them: slots are carved in order from HeapBase), the blocks
//	  (slot, size, freed, allocating and freeing thread, allocation and free
//	  stacks: id, generation and address follow from the order), the
//	  quarantine (slots, oldest first) and the non-empty free lists
//	  (ascending rounded size, each the slots in list order)
//	new_pages regions (base, size); removed regions (base, size, thread,
//	  stack)
//
// The derived fields (block ids, generations and addresses, slot bounds and
// owners, brk, the mapped arena, live and quarantined bytes, the count of
// heuristically blocked threads) are recomputed, so they cannot disagree.
// Not encoded is what Restore resets or the machine rebuilds: the LR/SC
// reservation, the CPU's caches, the kernel's transition in progress and
// its access index, and the heap's copy-on-write flag (a decoded heap is
// marked shared). Breakpoints outlive restores in one process: New arms
// those the image and Config imply, DecodeCheckpoint those at the return
// addresses of the threads' pending sync functions.
//
// Pages lists every mapped page. Any change to this encoding, or to what a
// kernel field means, needs a new version. Version 2 (kernel.Semantics
// 2) ends with the spin-loop rule's state, always (spinTag); version 1
// checkpoints are not read (a store's older checkpoint is re-executed
// instead).
const CheckpointVersion = 2

// atXbeginBit marks, in a thread's run-state byte, a thread stopped at
// an _xbegin (a later addition: version 1 states without it read as
// before).
const atXbeginBit = 0x80

// posixTag starts the POSIX-threads part of a state, present only when
// the program uses pthreads (a later addition: version 1 states without
// it read as before).
const posixTag = 'P'

// nondetTag starts the values chosen for the nondet calls threads are
// stopped before, present only when one is not the first (a later
// addition: states without it read as before).
const nondetTag = 'N'

// lineupTag starts the state of a linearizability test's calls, present
// only when one was made (a later addition: states without it read as
// before).
const lineupTag = 'L'

// exposedTag starts the threads' exposed stack ranges (exposure.go),
// present only when one is set (a later addition: states without it
// read as before).
const exposedTag = 'X'

// atomicTag starts the SV-COMP atomic sections' state (svcomp.go),
// present only when a thread is in one or has a pending atomic frame, or
// an execution interleaved one (a later addition: states without it read
// as before): the atomicBroken flag, then per thread its depth, frames
// (return address, sp, begin flag) and spurious flag.
const atomicTag = 'V'

// spinTag starts the spin-loop rule's state (spin.go), the last part of
// every version 2 state. Per thread: spinning, spinPC, spinDirty, then
// its window, newest state first: a count, then per state its pc,
// x0..x31, flags byte, stack bytes and the locations of the transition
// into it (address, size byte, value).
const spinTag = 'S'

// Checkpoint is a machine state outside the process: the kernel and CPU
// state as one opaque byte string, and the guest memory as pages, so the
// store can compress them and keep each distinct page once.
//
// A checkpoint restores only into a Kernel made from the same ELF image
// (not checked: key checkpoints by image) and the same Config (checked, by
// digest).
type Checkpoint struct {
	State []byte // see CheckpointVersion
	Pages []Page // every mapped page, ascending address
}

// Page is one page of guest memory. Data is PageSize bytes, or empty for
// a page of zeros. EncodeCheckpoint's Data is the snapshot's own memory: it
// must not be modified.
type Page struct {
	Addr uint64
	Data []byte
}

// maxSyncFrames bounds a thread's sync frames (see enterFunc).
const maxSyncFrames = 64

var zeroPage [mem.PageSize]byte

// EncodeCheckpoint turns a snapshot taken by k into a checkpoint. The same
// snapshot always gives the same bytes.
func (k *Kernel) EncodeCheckpoint(s record.Snapshot) (*Checkpoint, error) {
	sn, ok := s.(*snapshot)
	if !ok || sn == nil {
		return nil, fmt.Errorf("checkpoint: %T is not a snapshot of this kernel", s)
	}
	w := &encoder{b: []byte{CheckpointVersion}}
	digest := k.configDigest()
	w.b = append(w.b, digest[:]...)
	w.u(sn.pc)
	w.u(sn.instret)
	for _, x := range sn.regs {
		w.u(x)
	}

	var pages []Page
	var runs []pageRun
	sn.mem.Walk(func(addr uint64, perm mem.Perm, data *[mem.PageSize]byte) {
		p := Page{Addr: addr}
		if data != nil && *data != zeroPage {
			p.Data = data[:]
		}
		pages = append(pages, p)
		vpn := addr >> mem.PageShift
		if n := len(runs); n > 0 && runs[n-1].start+runs[n-1].n == vpn && runs[n-1].perm == perm {
			runs[n-1].n++
		} else {
			runs = append(runs, pageRun{vpn, 1, perm})
		}
	})
	w.u(uint64(len(runs)))
	end := uint64(0)
	for _, r := range runs {
		w.u(r.start - end)
		w.u(r.n)
		w.b = append(w.b, byte(r.perm))
		end = r.start + r.n
	}

	st := &sn.st
	w.u(uint64(len(st.threads)))
	for i := range st.threads {
		t := st.threads[i]
		w.tid(t.tid)
		w.u(t.pc)
		for _, x := range t.regs {
			w.u(x)
		}
		w.b = append(w.b, byte(t.state)|atXbeginBit*byte(b2i(t.atXbegin)))
		w.u(t.wake)
		w.flag(t.atBreak)
		w.u(t.stackLo)
		w.u(t.stackHi)
		w.u(uint64(t.yields))
		w.u(uint64(t.atomics))
		w.u(uint64(len(t.calls)))
		for _, c := range t.calls {
			w.str(c.fn.String())
			w.u(c.arg)
			w.u(c.ret)
			w.u(c.sp)
		}
		w.flag(t.hblocked)
		w.u(uint64(len(t.wait)))
		for _, r := range t.wait {
			w.u(r.lo)
			w.u(r.hi)
		}
		w.u(t.waitMutex)
	}
	w.i(int64(st.cur))
	w.tid(st.nextTID)
	w.u(st.clock)
	w.i(int64(st.status))
	w.flag(st.ended)
	w.u(uint64(st.pps))
	w.b = append(w.b, byte(st.lastPP))
	w.tid(st.yieldTo)
	w.u(st.sumInstr)
	w.u(st.nTrans)
	w.tid(st.lastExited)
	w.u(uint64(st.stuck))
	w.u(uint64(st.yieldStreak))
	w.tid(st.streakTID)
	w.u(st.work)
	if k.cfg.HTM.Weak {
		w.flag(st.wtx != nil)
		if tx := st.wtx; tx != nil {
			w.tid(tx.tid)
			w.u(tx.pc)
			for _, x := range tx.regs {
				w.u(x)
			}
			w.u(tx.beginPC)
			w.u(uint64(tx.calls))
			w.u(uint64(len(tx.undo)))
			for _, e := range tx.undo {
				w.u(e.addr)
				w.str(string(e.old))
			}
		}
	}

	if st.out == nil {
		w.u(0)
	} else {
		out := make([]byte, st.out.size)
		for n := st.out; n != nil; n = n.prev {
			copy(out[n.size-len(n.data):], n.data)
		}
		w.u(uint64(len(out)) + 1)
		w.b = append(w.b, out...)
	}
	w.flag(st.bug != nil)
	if b := st.bug; b != nil {
		w.b = append(w.b, byte(b.Kind))
		w.str(b.Message)
		w.tid(b.Thread)
		w.u(b.PC)
		w.stack(b.Stack)
		w.u(uint64(len(b.Details)))
		for _, d := range b.Details {
			w.str(d.Title)
			w.tid(d.Thread)
			w.stack(d.Stack)
			w.str(d.Text)
		}
	}
	w.u(uint64(len(st.diag)))
	for _, s := range st.diag {
		w.str(s)
	}

	h := &st.heap
	w.u(uint64(len(h.slots)))
	for _, s := range h.slots {
		w.u(s.rounded)
	}
	w.u(uint64(len(h.blocks)))
	for _, b := range h.blocks {
		w.u(uint64(b.slot))
		w.u(b.size)
		w.flag(b.freed)
		w.tid(b.allocThread)
		w.tid(b.freeThread)
		w.stack(b.allocStack)
		w.stack(b.freeStack)
	}
	w.u(uint64(len(h.quarantine)))
	for _, s := range h.quarantine {
		w.u(uint64(s))
	}
	var sizes []uint64 // map order is random: sort
	for size, l := range h.free {
		if len(l) > 0 {
			sizes = append(sizes, size)
		}
	}
	slices.Sort(sizes)
	w.u(uint64(len(sizes)))
	for _, size := range sizes {
		w.u(uint64(len(h.free[size])))
		for _, s := range h.free[size] {
			w.u(uint64(s))
		}
	}

	w.u(uint64(len(st.regions)))
	for _, r := range st.regions {
		w.u(r.base)
		w.u(r.size)
	}
	w.u(uint64(len(st.removed)))
	for _, r := range st.removed {
		w.u(r.base)
		w.u(r.size)
		w.tid(r.thread)
		w.stack(r.stack)
	}
	// POSIX threads (a later addition: present only when used, so that
	// the states of P2 programs stay as before).
	if len(st.pthreads) > 0 || slices.ContainsFunc(st.threads, func(t *thread) bool { return t.waitKind != waitNone || t.preSync }) {
		w.b = append(w.b, posixTag)
		for i := range st.threads {
			t := st.threads[i]
			w.b = append(w.b, byte(t.waitKind))
			w.u(t.waitOn)
			w.flag(t.preSync)
		}
		w.u(uint64(len(st.pthreads)))
		for _, p := range st.pthreads {
			w.tid(p.tid)
			w.u(p.ret)
			w.flag(p.exited)
			w.flag(p.detached)
		}
	}
	if slices.ContainsFunc(st.threads, func(t *thread) bool { return t.nondet != 0 }) {
		w.b = append(w.b, nondetTag)
		for i := range st.threads {
			w.u(uint64(st.threads[i].nondet))
		}
	}
	if st.lineupCalls > 0 {
		w.b = append(w.b, lineupTag)
		w.u(uint64(st.lineupCalls))
		w.u(uint64(st.lineupThreads))
		for i := range st.threads {
			l := &st.threads[i].lineup
			w.flag(l.open)
			w.flag(l.made)
			w.str(l.op)
		}
	}
	if slices.ContainsFunc(st.threads, func(t *thread) bool { return len(t.exposed) > 0 }) {
		w.b = append(w.b, exposedTag)
		for i := range st.threads {
			t := st.threads[i]
			w.u(uint64(len(t.exposed)))
			for _, r := range t.exposed {
				w.u(r.lo)
				w.u(r.hi)
			}
		}
	}
	if st.atomicBroken || slices.ContainsFunc(st.threads, func(t *thread) bool { return t.atomic != 0 || len(t.atomicFrames) > 0 || t.spurious }) {
		w.b = append(w.b, atomicTag)
		w.flag(st.atomicBroken)
		for i := range st.threads {
			t := st.threads[i]
			w.u(uint64(t.atomic))
			w.u(uint64(len(t.atomicFrames)))
			for _, f := range t.atomicFrames {
				w.u(f.ret)
				w.u(f.sp)
				w.flag(f.begin)
			}
			w.flag(t.spurious)
		}
	}
	{
		w.b = append(w.b, spinTag)
		for i := range st.threads {
			t := st.threads[i]
			w.flag(t.spinning)
			w.u(t.spinPC)
			w.flag(t.spinDirty)
			var chain []*spinNode
			for n := t.spin; n != nil && len(chain) < spinStates; n = n.prev {
				chain = append(chain, n)
			}
			w.u(uint64(len(chain)))
			for _, n := range chain {
				w.u(n.st.pc)
				for _, x := range n.st.regs {
					w.u(x)
				}
				w.b = append(w.b, n.st.flags)
				w.str(string(n.st.stack))
				w.u(uint64(len(n.locs)))
				for _, l := range n.locs {
					w.u(l.addr)
					w.b = append(w.b, l.size)
					w.u(l.val)
				}
			}
		}
	}
	return &Checkpoint{State: w.b, Pages: pages}, nil
}

// DecodeCheckpoint turns a checkpoint back into a snapshot for k.Restore.
// It rejects, with an error, any checkpoint that is malformed or that k's
// Config did not make; allocations are bounded by the checkpoint's size. It
// arms the breakpoints that see the threads' pending sync functions return
// (the CPU keeps breakpoints across restores; a fresh k lacks them), so the
// snapshot is for k.
func (k *Kernel) DecodeCheckpoint(c *Checkpoint) (record.Snapshot, error) {
	if c == nil {
		return nil, fmt.Errorf("checkpoint: nil")
	}
	sn, runs, err := k.decodeState(c.State)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if sn.mem, err = buildMemory(runs, c.Pages); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	for _, t := range sn.st.threads {
		for _, f := range t.calls {
			k.cpu.SetBreakpoint(f.ret)
		}
		for _, f := range t.atomicFrames {
			k.cpu.SetBreakpoint(f.ret)
		}
	}
	return sn, nil
}

type pageRun struct {
	start, n uint64 // page numbers
	perm     mem.Perm
}

func (k *Kernel) decodeState(b []byte) (*snapshot, []pageRun, error) {
	r := &decoder{b: b, size: len(b)}
	if v := r.u8(); r.err == nil && v != CheckpointVersion {
		return nil, nil, fmt.Errorf("version %d, want %d", v, CheckpointVersion)
	}
	digest := k.configDigest()
	if d := r.take(len(digest)); r.err == nil && string(d) != string(digest[:]) {
		return nil, nil, fmt.Errorf("made under another kernel Config")
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	sn := &snapshot{pc: r.u(), instret: r.u()}
	r.regs(&sn.regs)
	if sn.instret > k.cfg.MaxInstructions {
		r.fail("instret %d exceeds the budget of %d", sn.instret, k.cfg.MaxInstructions)
	}

	const maxPage = mem.Limit >> mem.PageShift
	runs := make([]pageRun, r.count(3))
	end := uint64(0)
	for i := range runs {
		gap, n := r.u(), r.u()
		perm := mem.Perm(r.u8())
		if gap > maxPage-end || n == 0 || n > maxPage-end-gap {
			r.fail("page run %d (+%d, %d pages) is outside the 39-bit address space or not ascending", i, gap, n)
		}
		if perm&^(mem.PermR|mem.PermW|mem.PermX|mem.PermWatch) != 0 {
			r.fail("page run %d: bad permission 0x%x", i, perm)
		}
		if r.err != nil {
			return nil, nil, r.err
		}
		runs[i] = pageRun{end + gap, n, perm}
		end += gap + n
	}

	st := &sn.st
	if st.threads = mk[*thread](r.count(40)); len(st.threads) > k.cfg.MaxThreads {
		r.fail("%d threads, more than MaxThreads (%d)", len(st.threads), k.cfg.MaxThreads)
	}
	for i := range st.threads {
		st.threads[i] = &thread{} // gen 0: the snapshot's, never the live state's own
	}
	for i := range st.threads {
		if r.err != nil {
			break
		}
		t := st.threads[i]
		t.tid, t.pc = r.tid(), r.u()
		if t.tid <= 0 || (i > 0 && t.tid <= st.threads[i-1].tid) {
			r.fail("thread %d: tid %d out of order", i, t.tid)
		}
		r.regs(&t.regs)
		b := r.u8()
		t.atXbegin = b&atXbeginBit != 0
		if t.state = threadState(b &^ atXbeginBit); t.state > stWaiting {
			r.fail("thread %d: bad run state %d", t.tid, t.state)
		}
		t.wake, t.atBreak = r.u(), r.flag()
		if t.stackLo, t.stackHi = r.u(), r.u(); t.stackLo > t.stackHi {
			r.fail("thread %d: stack 0x%x-0x%x", t.tid, t.stackLo, t.stackHi)
		}
		t.yields, t.atomics = r.counter(), r.counter()
		if t.calls = mk[syncFrame](r.count(4)); len(t.calls) > maxSyncFrames {
			r.fail("thread %d: %d sync frames, more than %d", t.tid, len(t.calls), maxSyncFrames)
		}
		for j := range t.calls {
			if r.err != nil {
				break
			}
			f := &t.calls[j]
			name := r.str()
			if fn, ok := record.SyncFuncNamed(name); ok && fn != record.NoSyncFunc {
				f.fn = fn
			} else {
				r.fail("thread %d: sync frame in unknown function %q", t.tid, name)
			}
			f.arg, f.ret, f.sp = r.u(), r.u(), r.u()
		}
		t.hblocked = r.flag()
		t.wait = mk[waitRange](r.count(2))
		for j := range t.wait {
			if t.wait[j] = (waitRange{r.u(), r.u()}); t.wait[j].lo >= t.wait[j].hi {
				r.fail("thread %d: empty wait range", t.tid)
			}
		}
		if t.waitMutex = r.u(); !t.hblocked && (t.wait != nil || t.waitMutex != 0) {
			r.fail("thread %d waits but is not blocked", t.tid)
		}
		if t.hblocked {
			st.hblocked++
		}
	}
	if st.cur = int(r.i()); st.cur < -1 || st.cur >= len(st.threads) {
		r.fail("current thread index %d out of range", st.cur)
	}
	if st.nextTID = r.tid(); st.nextTID < 2 || (len(st.threads) > 0 && st.nextTID <= st.threads[len(st.threads)-1].tid) {
		r.fail("next tid %d", st.nextTID)
	}
	st.clock = r.u()
	st.status = int(r.i())
	if st.ended = r.flag(); !st.ended && len(st.threads) == 0 {
		r.fail("no threads in a live process")
	}
	st.pps = r.counter()
	if st.lastPP = record.PPKind(r.u8()); st.lastPP > record.PPExitCall {
		r.fail("bad PP kind %d", st.lastPP)
	}
	st.yieldTo = r.tid()
	if st.sumInstr, st.nTrans = r.u(), r.u(); st.sumInstr > sn.instret {
		r.fail("%d instructions in transitions, more than instret (%d)", st.sumInstr, sn.instret)
	}
	st.lastExited = r.tid()
	st.stuck, st.yieldStreak, st.streakTID = r.counter(), r.counter(), r.tid()
	if st.work = r.u(); st.work > math.MaxUint64-sn.instret {
		r.fail("kernel work %d overflows", st.work)
	}
	if st.yieldTo < 0 || st.lastExited < 0 || st.streakTID < 0 {
		r.fail("negative tid")
	}
	if k.cfg.HTM.Weak && r.flag() {
		tx := &weakTxn{tid: r.tid(), pc: r.u()}
		r.regs(&tx.regs)
		tx.beginPC, tx.calls = r.u(), r.counter()
		if n := r.count(2); n > MaxUndo {
			r.fail("%d undo entries, more than MaxUndo", n)
		} else {
			tx.undo = mk[undoEntry](n)
			for i := range tx.undo {
				tx.undo[i] = undoEntry{addr: r.u(), old: []byte(r.str())}
				if l := len(tx.undo[i].old); l == 0 || l > 8 {
					r.fail("undo entry %d: %d bytes", i, l)
				}
			}
		}
		if r.err == nil && !slices.ContainsFunc(st.threads, func(t *thread) bool { return t.tid == tx.tid }) {
			r.fail("the weak transaction's thread %d does not exist", tx.tid)
		}
		st.wtx = tx
	}

	if n := r.u(); n > 0 {
		if n-1 > MaxOutput {
			r.fail("%d bytes of output, more than MaxOutput", n-1)
		} else if data := r.take(int(n - 1)); r.err == nil {
			st.out = &outNode{data: slices.Clone(data), size: len(data)}
		}
	}
	if r.flag() {
		b := &record.Bug{Kind: record.BugKind(r.u8()), Message: r.str(), Thread: r.tid(), PC: r.u(), Stack: r.stack()}
		b.Details = mk[record.Detail](r.count(4))
		for i := range b.Details {
			b.Details[i] = record.Detail{Title: r.str(), Thread: r.tid(), Stack: r.stack(), Text: r.str()}
		}
		if b.Kind == 0 {
			r.fail("bug of kind 0")
		} else if !st.ended {
			r.fail("a bug in an execution that has not ended")
		}
		st.bug = b
	}
	st.diag = mk[string](r.count(1))
	for i := range st.diag {
		st.diag[i] = r.str()
	}

	decodeHeap(r, &st.heap)

	st.regions = mk[region](r.count(2))
	used := st.heap.brk - HeapBase
	for i := range st.regions {
		rg := region{r.u(), r.u()}
		if !pageRange(rg) || rg.base < NullGuardEnd || (rg.base < HeapLimit && rg.base+rg.size > HeapBase) ||
			(i > 0 && rg.base < st.regions[i-1].base+st.regions[i-1].size) {
			r.fail("bad new_pages region 0x%x+0x%x", rg.base, rg.size)
		}
		st.regions[i] = rg
		used += rg.size // no overflow: the regions are disjoint and below mem.Limit
	}
	if used > k.cfg.MaxMemory {
		r.fail("%d bytes of guest memory, more than MaxMemory (%d)", used, k.cfg.MaxMemory)
	}
	if st.removed = mk[removedRegion](r.count(4)); len(st.removed) > 64 {
		r.fail("%d removed regions, more than 64", len(st.removed))
	}
	for i := range st.removed {
		rm := removedRegion{region: region{r.u(), r.u()}, thread: r.tid(), stack: r.stack()}
		if !pageRange(rm.region) {
			r.fail("bad removed region 0x%x+0x%x", rm.base, rm.size)
		}
		st.removed[i] = rm
	}
	if r.err == nil && len(r.b) > 0 && r.b[0] == posixTag {
		r.take(1)
		for i := range st.threads {
			t := st.threads[i]
			if t.waitKind = waitKind(r.u8()); t.waitKind > waitAssume {
				r.fail("thread %d: bad wait kind %d", t.tid, t.waitKind)
			}
			t.waitOn, t.preSync = r.u(), r.flag()
		}
		st.pthreads = mk[pthreadRec](r.count(4))
		for i := range st.pthreads {
			p := pthreadRec{tid: r.tid(), ret: r.u(), exited: r.flag(), detached: r.flag()}
			if p.tid <= 0 || (i > 0 && p.tid <= st.pthreads[i-1].tid) {
				r.fail("pthread %d: tid %d out of order", i, p.tid)
			}
			st.pthreads[i] = p
		}
	}
	if r.err == nil && len(r.b) > 0 && r.b[0] == nondetTag {
		r.take(1)
		for i := range st.threads {
			t := st.threads[i]
			if t.nondet = int64(r.u()); t.nondet < 0 || t.nondet >= MaxNondetValues || t.nondet != 0 && !t.preSync {
				r.fail("thread %d: nondet value %d", t.tid, t.nondet)
			}
		}
	}
	if r.err == nil && len(r.b) > 0 && r.b[0] == lineupTag {
		r.take(1)
		if st.lineupCalls = int(r.u()); st.lineupCalls <= 0 || st.lineupCalls > LineupMaxCalls {
			r.fail("%d linearizability-test calls", st.lineupCalls)
		}
		if st.lineupThreads = int(r.u()); st.lineupThreads <= 0 || st.lineupThreads > LineupMaxThreads {
			r.fail("%d threads making linearizability-test calls", st.lineupThreads)
		}
		for i := range st.threads {
			l := &st.threads[i].lineup
			l.open, l.made, l.op = r.flag(), r.flag(), r.str()
			if len(l.op) > LineupMaxName || l.open != (l.op != "") || l.open && !l.made {
				r.fail("thread %d: linearizability-test call %q (open %v)", st.threads[i].tid, l.op, l.open)
			}
		}
	}
	if r.err == nil && len(r.b) > 0 && r.b[0] == exposedTag {
		r.take(1)
		for i := range st.threads {
			t := st.threads[i]
			t.exposed = mk[waitRange](r.count(2))
			prev := uint64(0)
			for j := range t.exposed {
				x := waitRange{r.u(), r.u()}
				if x.lo&7 != 0 || x.hi&7 != 0 || x.lo >= x.hi || x.lo < prev || x.lo < t.stackLo&^7 || x.hi > (t.stackHi+7)&^7 || j >= maxExposed {
					r.fail("thread %d: exposed stack range 0x%x-0x%x outside its stack 0x%x-0x%x or out of order", t.tid, x.lo, x.hi, t.stackLo, t.stackHi)
					break
				}
				t.exposed[j], prev = x, x.hi
			}
		}
	}
	if r.err == nil && len(r.b) > 0 && r.b[0] == atomicTag {
		r.take(1)
		st.atomicBroken = r.flag()
		for i := range st.threads {
			t := st.threads[i]
			if d := r.u(); d > maxSyncFrames {
				r.fail("thread %d: atomic depth %d", t.tid, d)
			} else {
				t.atomic = int32(d)
			}
			if t.atomicFrames = mk[atomicFrame](r.count(3)); len(t.atomicFrames) > maxSyncFrames {
				r.fail("thread %d: %d atomic frames, more than %d", t.tid, len(t.atomicFrames), maxSyncFrames)
				break
			}
			for j := range t.atomicFrames {
				t.atomicFrames[j] = atomicFrame{ret: r.u(), sp: r.u(), begin: r.flag()}
			}
			t.spurious = r.flag()
		}
	}
	if r.err == nil && (len(r.b) == 0 || r.b[0] != spinTag) {
		r.fail("no spin-loop state")
	}
	if r.err == nil {
		r.take(1)
		for i := range st.threads {
			t := st.threads[i]
			t.spinning, t.spinPC, t.spinDirty = r.flag(), r.u(), r.flag()
			if t.spinning && !t.hblocked {
				r.fail("thread %d spins but is not blocked", t.tid)
			}
			chain := mk[*spinNode](r.count(36))
			if len(chain) > spinStates {
				r.fail("thread %d: %d spin states, more than %d", t.tid, len(chain), spinStates)
			}
			for j := range chain {
				if r.err != nil {
					break
				}
				n := &spinNode{}
				n.st.pc = r.u()
				for x := range n.st.regs {
					n.st.regs[x] = r.u()
				}
				n.st.flags = r.u8()
				if n.st.stack = []byte(r.str()); len(n.st.stack) > spinStackMax {
					r.fail("thread %d: a spin state of %d stack bytes", t.tid, len(n.st.stack))
				}
				n.locs = mk[spinLoc](r.count(3))
				for l := range n.locs {
					n.locs[l] = spinLoc{addr: r.u(), size: r.u8(), val: r.u()}
					if sz := n.locs[l].size; sz != 1 && sz != 2 && sz != 4 && sz != 8 {
						r.fail("thread %d: a spin location of %d bytes", t.tid, sz)
					}
				}
				chain[j] = n
			}
			for j := len(chain) - 1; j >= 0 && r.err == nil; j-- {
				if j+1 < len(chain) {
					chain[j].prev = chain[j+1]
					chain[j].depth = chain[j+1].depth + 1
				} else {
					chain[j].depth = 1
				}
			}
			if len(chain) > 0 && r.err == nil {
				t.spin = chain[0]
			}
		}
	}
	for i := range st.threads {
		if t := st.threads[i]; (t.state == stWaiting) != (t.waitKind != waitNone) {
			r.fail("thread %d: run state %s with wait kind %d", t.tid, t.state, t.waitKind)
		}
	}
	if r.err == nil && len(r.b) > 0 {
		r.fail("%d bytes of trailing data", len(r.b))
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return sn, runs, nil
}

// decodeHeap reads the heap and rebuilds its derived fields (see
// CheckpointVersion).
func decodeHeap(r *decoder, h *heapState) {
	*h = newHeap()
	h.shared = true // the snapshot's: Restore copies before writing
	h.slots = mk[slot](r.count(1))
	for i := range h.slots {
		rounded := r.u()
		if rounded == 0 || rounded%heapAlign != 0 || rounded > HeapLimit-HeapBase || h.brk+2*redzone+rounded > HeapLimit {
			r.fail("heap slot %d: bad size %d", i, rounded)
			return
		}
		h.slots[i] = slot{lo: h.brk, hi: h.brk + 2*redzone + rounded, rounded: rounded, cur: -1, last: -1}
		h.brk = h.slots[i].hi
	}
	h.mapped = roundUp(h.brk, mem.PageSize)
	h.blocks = mk[block](r.count(7))
	for i := range h.blocks {
		si := r.index(len(h.slots))
		b := block{id: uint32(i + 1), slot: si, size: r.u(), freed: r.flag(), allocThread: r.tid(), freeThread: r.tid(),
			allocStack: r.stack(), freeStack: r.stack()}
		if r.err != nil {
			return
		}
		sl := &h.slots[si]
		if b.size > sl.rounded || max(roundUp(b.size, heapAlign), heapAlign) != sl.rounded {
			r.fail("heap block #%d: %d bytes in a slot of %d", b.id, b.size, sl.rounded)
		}
		if sl.cur >= 0 {
			r.fail("heap block #%d reuses the slot of live block #%d", b.id, sl.cur+1)
		}
		if !b.freed && (b.freeThread != 0 || b.freeStack != nil) {
			r.fail("heap block #%d is live but has a free record", b.id)
		}
		sl.gen++
		b.gen, b.addr = sl.gen, sl.lo+redzone
		sl.last = i
		if !b.freed {
			sl.cur = i
			h.live += b.size
		}
		h.blocks[i] = b
	}
	if uint64(len(h.blocks)) > math.MaxUint32 {
		r.fail("too many heap blocks")
	}
	for si := range h.slots {
		if h.slots[si].last < 0 {
			r.fail("heap slot %d never held a block", si)
		}
	}
	// Every freed slot waits in exactly one of the quarantine and the free
	// lists; a live one in neither.
	placed := make([]bool, len(h.slots))
	place := func(si int) {
		if r.err == nil && (h.slots[si].cur >= 0 || placed[si]) {
			r.fail("heap slot %d is live or listed twice", si)
		} else if r.err == nil {
			placed[si] = true
		}
	}
	if h.quarantine = mk[int](r.count(1)); len(h.quarantine) > quarantineMax {
		r.fail("%d slots in quarantine", len(h.quarantine))
	}
	for i := range h.quarantine {
		si := r.index(len(h.slots))
		if place(si); r.err != nil {
			return
		}
		h.quarantine[i] = si
		h.quarBytes += h.slots[si].rounded
	}
	if h.quarBytes > quarantineSize {
		r.fail("%d bytes in quarantine", h.quarBytes)
	}
	lists := r.count(2)
	for i := 0; i < lists && r.err == nil; i++ {
		l := make([]int, r.count(1))
		if len(l) == 0 {
			r.fail("empty free list")
		}
		for j := range l {
			l[j] = r.index(len(h.slots))
			place(l[j])
		}
		if r.err != nil {
			return
		}
		size := h.slots[l[0]].rounded
		for _, si := range l {
			if h.slots[si].rounded != size {
				r.fail("free list of size %d holds a slot of size %d", size, h.slots[si].rounded)
			}
		}
		if len(h.free[size]) > 0 {
			r.fail("two free lists of size %d", size)
		}
		h.free[size] = l
	}
	for si := range h.slots {
		if r.err == nil && h.slots[si].cur < 0 && !placed[si] {
			r.fail("heap slot %d is free but in no list", si)
		}
	}
}

// pageRange reports whether r is a non-empty range of whole pages in the
// guest address space.
func pageRange(r region) bool {
	return r.base&mem.PageMask == 0 && r.size&mem.PageMask == 0 && r.size > 0 &&
		r.base < mem.Limit && r.size <= mem.Limit-r.base
}

// buildMemory checks that pages are exactly the pages the runs map, in
// order, and builds the memory.
func buildMemory(runs []pageRun, pages []Page) (*mem.Snapshot, error) {
	total := uint64(0)
	for _, r := range runs {
		total += r.n // no overflow: the runs are disjoint and below mem.Limit
	}
	if total != uint64(len(pages)) {
		return nil, fmt.Errorf("the page table maps %d pages but there are %d", total, len(pages))
	}
	i := 0
	for _, r := range runs {
		for vpn := r.start; vpn < r.start+r.n; vpn++ {
			p := &pages[i]
			switch {
			case p.Addr&mem.PageMask != 0:
				return nil, fmt.Errorf("page %d: address 0x%x is not page aligned", i, p.Addr)
			case p.Addr >= mem.Limit:
				return nil, fmt.Errorf("page %d: address 0x%x is outside the 39-bit address space", i, p.Addr)
			case p.Addr != vpn<<mem.PageShift:
				return nil, fmt.Errorf("page %d is at 0x%x, but the page table maps 0x%x there (pages are the mapped pages, ascending)", i, p.Addr, vpn<<mem.PageShift)
			case len(p.Data) != 0 && len(p.Data) != mem.PageSize:
				return nil, fmt.Errorf("page 0x%x: %d bytes, want %d or none", p.Addr, len(p.Data), mem.PageSize)
			}
			i++
		}
	}
	m := mem.New()
	for _, r := range runs {
		if err := m.Map(r.start<<mem.PageShift, r.n<<mem.PageShift, r.perm); err != nil {
			return nil, err // cannot happen: the runs were checked
		}
	}
	for _, p := range pages {
		if len(p.Data) > 0 && !bytes.Equal(p.Data, zeroPage[:]) {
			pg, _, _ := m.WritePage(p.Addr)
			copy(pg.Data[:], p.Data)
		}
	}
	return m.Snapshot(), nil
}

// configDigest identifies the Config: what makes a state meaningful (PPs,
// breakpoints, argv and stack layout) and what bounds it (limits, budget).
func (k *Kernel) configDigest() [8]byte {
	c := &k.cfg
	w := &encoder{}
	w.u(uint64(len(c.SyncPPs)))
	for _, s := range c.SyncPPs {
		w.str(s)
	}
	w.stack(c.DataRacePCs)
	w.u(uint64(len(c.Filters)))
	for _, f := range c.Filters {
		w.flag(f.Within)
		w.str(f.Func)
	}
	w.flag(c.NoTrack)
	w.i(int64(c.MaxThreads))
	w.u(c.MaxMemory)
	w.u(c.StackSize)
	w.u(c.MaxInstructions)
	w.i(int64(c.MaxPPs))
	w.u(uint64(len(c.Args)))
	for _, a := range c.Args {
		w.str(a)
	}
	if c.HTM != (HTMConfig{}) { // only then: the digests of earlier configs stay
		w.str("htm")
		w.flag(c.HTM.AbortCodes)
		if c.HTM.Weak {
			w.str("weak")
		}
	}
	if c.EveryAccess {
		w.str("every-access")
	}
	if c.ModelThreads {
		w.str("model-threads")
	}
	if c.LineupSerial {
		w.str("lineup-serial")
	}
	if c.ThesisHeuristics {
		w.str("thesis-heuristics")
	}
	if c.WaitForThreads {
		w.str("wait-for-threads")
	}
	if c.SVCOMP {
		w.str("svcomp")
	}
	sum := sha256.Sum256(w.b)
	return [8]byte(sum[:8])
}

// mk makes a slice of n elements, nil for none.
func mk[T any](n int) []T {
	if n == 0 {
		return nil
	}
	return make([]T, n)
}

type encoder struct{ b []byte }

func (w *encoder) u(v uint64)       { w.b = binary.AppendUvarint(w.b, v) }
func (w *encoder) i(v int64)        { w.b = binary.AppendVarint(w.b, v) }
func (w *encoder) tid(t record.TID) { w.i(int64(t)) }
func (w *encoder) str(s string)     { w.u(uint64(len(s))); w.b = append(w.b, s...) }
func (w *encoder) flag(v bool)      { w.b = append(w.b, byte(b2i(v))) }
func (w *encoder) stack(pcs []uint64) {
	w.u(uint64(len(pcs)))
	for _, pc := range pcs {
		w.u(pc)
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// decoder reads what encoder wrote. The first error sticks: later reads
// return zeros, so a decoding function checks r.err before it indexes with
// what it read.
type decoder struct {
	b    []byte
	size int
	err  error
}

func (r *decoder) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("state byte %d: %s", r.size-len(r.b), fmt.Sprintf(format, args...))
	}
}

func (r *decoder) take(n int) []byte {
	if r.err == nil && n > len(r.b) {
		r.fail("truncated")
	}
	if r.err != nil {
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *decoder) u8() byte {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *decoder) flag() bool {
	v := r.u8()
	if v > 1 {
		r.fail("bad boolean %d", v)
	}
	return v == 1
}

func (r *decoder) u() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("truncated or bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *decoder) i() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("truncated or bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// counter reads a non-negative counter.
func (r *decoder) counter() int {
	v := r.u()
	if v > math.MaxInt {
		r.fail("counter %d out of range", v)
		return 0
	}
	return int(v)
}

func (r *decoder) tid() record.TID {
	v := r.i()
	if v != int64(int32(v)) {
		r.fail("tid %d out of range", v)
		return 0
	}
	return record.TID(v)
}

// count reads the length of a list whose elements take at least size
// bytes each, so that no count can claim more elements than the bytes left.
func (r *decoder) count(size int) int {
	v := r.u()
	if v > uint64(len(r.b)/size) {
		r.fail("count %d exceeds the data left", v)
		return 0
	}
	return int(v)
}

// index reads an index below n.
func (r *decoder) index(n int) int {
	v := r.u()
	if v >= uint64(n) {
		r.fail("index %d out of range (%d)", v, n)
		return 0
	}
	return int(v)
}

func (r *decoder) str() string { return string(r.take(r.count(1))) }

func (r *decoder) stack() []uint64 {
	s := mk[uint64](r.count(1))
	for i := range s {
		s[i] = r.u()
	}
	return s
}

func (r *decoder) regs(x *[33]uint64) {
	for i := range x {
		x[i] = r.u()
	}
	if x[0] != 0 {
		r.fail("x0 is %d", x[0])
	}
}
