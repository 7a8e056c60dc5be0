package kernel

import (
	"fmt"
	"strings"

	"landslide/emu/cpu"
	"landslide/emu/mem"
	"landslide/record"
)

// bugHere ends the execution with a bug in the current thread at its PC.
func (k *Kernel) bugHere(kind record.BugKind, msg string, details []record.Detail) {
	k.bugAt(kind, msg, k.cpu.PC, details)
}

func (k *Kernel) bugAt(kind record.BugKind, msg string, pc uint64, details []record.Detail) {
	if k.st.ended {
		return
	}
	b := &record.Bug{Kind: kind, Message: msg, Thread: k.curTID(), PC: pc, Details: details}
	if k.curLook() != nil {
		b.Stack = k.stackAt(pc)
	}
	k.st.bug = b
	k.st.ended = true
}

// limitBug ends the execution at a limit of the checker: not a bug of
// the program (record.Bug.IsLimit), which the layers above report as a
// limit. msg names the limit and what raises it.
func (k *Kernel) limitBug(msg string) { k.bugHere(record.BugLimit, msg, nil) }

// threadLimit ends the execution at Config.MaxThreads.
func (k *Kernel) threadLimit() {
	k.limitBug(fmt.Sprintf("thread limit: creating a thread would exceed %d live threads (--max-threads raises it)", k.cfg.MaxThreads))
}

// memoryLimit ends the execution at Config.MaxMemory: what would have
// gone past it.
func (k *Kernel) memoryLimit(what string) {
	k.limitBug(fmt.Sprintf("memory limit: %s would exceed %s of guest memory (--max-memory raises it)", what, SizeText(k.cfg.MaxMemory)))
}

// SizeText prints a byte count for a message: in GiB, MiB or KiB when it
// is a whole number of them.
func SizeText(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// heapBug reports a heap error with the block's allocation and free stacks.
func (k *Kernel) heapBug(msg string, b *block) {
	k.bugHere(record.BugHeap, msg, blockDetails(b))
}

func blockDetails(b *block) []record.Detail {
	if b == nil {
		return nil
	}
	d := []record.Detail{{
		Title:  fmt.Sprintf("block #%d (%d bytes at 0x%x, generation %d) was allocated by thread %d at", b.id, b.size, b.addr, b.gen, b.allocThread),
		Thread: b.allocThread, Stack: b.allocStack,
	}}
	if b.freed {
		d = append(d, record.Detail{
			Title:  fmt.Sprintf("and freed by thread %d at", b.freeThread),
			Thread: b.freeThread, Stack: b.freeStack,
		})
	}
	return d
}

// trap turns a CPU stop that is not a kernel event into a bug.
func (k *Kernel) trap(s cpu.Stop) {
	switch s.Reason {
	case cpu.StopIllegal:
		what := "illegal instruction"
		if s.Inst.Raw == 0 {
			what += " (all zero bits: executing data or unset memory?)"
		}
		k.bugAt(record.BugIllegal, fmt.Sprintf("%s 0x%08x at 0x%x", what, s.Inst.Raw, s.PC), s.PC, nil)
	case cpu.StopEbreak:
		k.bugAt(record.BugIllegal, fmt.Sprintf("ebreak at 0x%x", s.PC), s.PC, nil)
	case cpu.StopMisaligned:
		if s.Inst.Op.IsAtomic() {
			k.bugAt(record.BugMisaligned, fmt.Sprintf("misaligned atomic %s at 0x%x (%d-byte access needs %d-byte alignment)", s.Inst.Op, s.Addr, s.Size, s.Size), s.PC, nil)
		} else {
			k.bugAt(record.BugMisaligned, fmt.Sprintf("jump to misaligned address 0x%x", s.Addr), s.PC, nil)
		}
	case cpu.StopWatch:
		v := k.violation
		k.violation = nil
		if t := k.cur(); t != nil && s.Addr < t.stackLo && s.Addr+StackGuardSize >= t.stackLo {
			// A thread stack allocated with malloc: running off its end
			// lands in the block's redzone.
			k.bugAt(record.BugStackOverflow, fmt.Sprintf("stack overflow: thread %d %s 0x%x, %d bytes below its stack (0x%x-0x%x)",
				t.tid, rw(s.Write), s.Addr, t.stackLo-s.Addr, t.stackLo, t.stackHi), s.PC, nil)
			return
		}
		if v == nil {
			v = &heapViolation{msg: fmt.Sprintf("invalid heap access at 0x%x", s.Addr)}
		}
		k.bugAt(record.BugHeap, v.msg, s.PC, blockDetails(v.block))
	case cpu.StopFault:
		k.fault(s)
	default:
		k.bugAt(record.BugIllegal, fmt.Sprintf("unexpected stop %s at 0x%x", s.Reason, s.PC), s.PC, nil)
	}
}

// fault classifies an access to memory that is not mapped or not permitted.
func (k *Kernel) fault(s cpu.Stop) {
	f := s.Fault
	op := "read of"
	switch {
	case f.Exec:
		op = "jump to"
	case f.Write:
		op = "write to"
	}
	t := k.cur()
	switch {
	case f.Addr < NullGuardEnd:
		k.bugAt(record.BugMemory, fmt.Sprintf("null pointer dereference: %s 0x%x", op, f.Addr), s.PC, nil)
		return
	case !f.Mapped && t != nil && t.stackLo < t.stackHi && f.Addr < t.stackLo && f.Addr+StackGuardSize >= t.stackLo:
		k.bugAt(record.BugStackOverflow, fmt.Sprintf("stack overflow: thread %d %s 0x%x, %d bytes below its stack (0x%x-0x%x)",
			t.tid, op, f.Addr, t.stackLo-f.Addr, t.stackLo, t.stackHi), s.PC, nil)
		return
	}
	for i := len(k.st.removed) - 1; i >= 0; i-- {
		r := k.st.removed[i]
		if !f.Mapped && f.Addr >= r.base && f.Addr < r.base+r.size {
			k.bugAt(record.BugMemory, fmt.Sprintf("%s 0x%x: those pages (0x%x, %d bytes) were removed by thread %d", op, f.Addr, r.base, r.size, r.thread), s.PC,
				[]record.Detail{{Title: fmt.Sprintf("remove_pages(0x%x) by thread %d at", r.base, r.thread), Thread: r.thread, Stack: r.stack}})
			return
		}
	}
	if f.Mapped {
		k.bugAt(record.BugMemory, fmt.Sprintf("%s 0x%x: the page is %s", op, f.Addr, f.Perm&(mem.PermR|mem.PermW|mem.PermX)), s.PC, nil)
		return
	}
	k.bugAt(record.BugMemory, fmt.Sprintf("invalid memory access: %s unmapped address 0x%x", op, f.Addr), s.PC, nil)
}

// deadlock reports that no live thread can run.
func (k *Kernel) deadlock() {
	if k.cfg.SVCOMP {
		k.st.ended = true // an end state: no error is reachable from it (svcomp.go)
		return
	}
	msg := "threads %s are all blocked and none can wake the others"
	if len(k.st.threads) == 1 {
		msg = "thread %s is blocked and no other thread exists to wake it"
	}
	k.threadsBug(msg, func(t *thread) string {
		what := "is descheduled, waiting for make_runnable"
		if t.spinning {
			return k.spinText(t)
		}
		if k.waitsForTxn(t) {
			return fmt.Sprintf("waits at an _xbegin for thread %d's transaction", k.st.wtx.tid)
		}
		if w := k.posixWait(t); w != "" {
			return w
		}
		if n := len(t.calls); n > 0 {
			what += " inside " + t.calls[n-1].fn.String()
			if a := t.calls[n-1].arg; a != 0 {
				if name := k.DataName(a); name != "" {
					what += fmt.Sprintf("(0x%x: %s)", a, name)
				} else {
					what += fmt.Sprintf("(0x%x)", a)
				}
			}
		}
		return what
	})
}

// threadsBug ends the execution with a deadlock naming every live thread:
// msg gets the list of tids, describe says what each one is doing.
func (k *Kernel) threadsBug(msg string, describe func(*thread) string) {
	var ids []string
	var details []record.Detail
	for _, t := range k.st.threads {
		ids = append(ids, fmt.Sprint(t.tid))
		details = append(details, record.Detail{Title: fmt.Sprintf("thread %d %s, at", t.tid, describe(t)), Thread: t.tid, Stack: k.threadStack(t)})
	}
	b := &record.Bug{Kind: record.BugDeadlock, Message: fmt.Sprintf(msg, strings.Join(ids, ", ")), Thread: k.curTID(), Details: details}
	if t := k.curLook(); t != nil {
		b.PC = k.cpu.PC
		b.Stack = k.threadStack(t)
	}
	k.st.bug = b
	k.st.ended = true
}

// endProcess ends the execution normally and runs the post-test checks
// (the thesis's magic globals, §3.1.4).
func (k *Kernel) endProcess(status int) {
	if k.st.ended {
		return
	}
	k.st.status = status
	if k.assumeStopped() {
		// An infeasible execution (Blocked): its end state is none of
		// the program's, so the post-test checks do not apply.
		k.st.ended = true
		return
	}
	if msg := k.checkMagic(); msg != "" {
		// Called from exit or the last vanish: point at the ecall.
		k.bugAt(record.BugAssert, msg, k.cpu.PC-4, nil)
		return
	}
	k.st.ended = true
}

func (k *Kernel) readGlobal(name string) (int64, bool) {
	addr, size, ok := k.syms.Lookup(name)
	if !ok {
		return 0, false
	}
	if size == 8 {
		v, ok := k.mem.Read64(addr)
		return int64(v), ok
	}
	v, ok := k.mem.Read32(addr)
	return int64(int32(v)), ok
}

func (k *Kernel) checkMagic() string {
	type pred struct {
		vars  []string
		check func(v []int64) (bool, string)
	}
	preds := []pred{
		{[]string{"magic_global_expected_result", "magic_global_value"}, func(v []int64) (bool, string) {
			return v[0] == v[1], fmt.Sprintf("magic_global_value is %d, expected %d", v[1], v[0])
		}},
		{[]string{"magic_expected_sum", "magic_thread_local_value_parent", "magic_thread_local_value_child"}, func(v []int64) (bool, string) {
			return v[0] == v[1]+v[2], fmt.Sprintf("parent %d + child %d = %d, expected %d", v[1], v[2], v[1]+v[2], v[0])
		}},
		{[]string{"magic_expected_sum_minus_result", "magic_thread_local_value_parent", "magic_thread_local_value_child", "magic_global_value"}, func(v []int64) (bool, string) {
			return v[0] == v[1]+v[2]-v[3], fmt.Sprintf("parent %d + child %d - result %d = %d, expected %d", v[1], v[2], v[3], v[1]+v[2]-v[3], v[0])
		}},
	}
	for _, p := range preds {
		if _, _, ok := k.syms.Lookup(p.vars[0]); !ok {
			continue
		}
		vals := make([]int64, len(p.vars))
		for i, name := range p.vars {
			v, ok := k.readGlobal(name)
			if !ok {
				return fmt.Sprintf("magic global check: %s is defined but %s is not", p.vars[0], name)
			}
			vals[i] = v
		}
		if ok, msg := p.check(vals); !ok {
			return "magic global check failed after all threads exited: " + msg
		}
	}
	return ""
}

// noteLoops applies the yield-loop and xchg-loop heuristics after a
// transition of the current thread ended at a PP of the given kind (thesis
// §3.4.6, check_user_yield_activity):
//   - a yield inside mutex_lock blocks the thread on that mutex at once,
//     until a return from mutex_unlock of it (the thesis's blocked_on_addr
//     fast path; a failed atomic exchange on the lock word is no release);
//   - TooManyYields yields, or TooManyXchgsWithPPs atomic instructions
//     outside the thread library (counted by Access), without other
//     thread-library activity block it on the memory it read in this
//     transition.
//
// A write by another thread to that memory unblocks it (wakeWaiters). When
// every thread that could run is so blocked, Runnable wakes them all and
// this counts the attempt; DeadlockFPMaxAttempts in a row is a deadlock.
func (k *Kernel) noteLoops(kind record.PPKind, tr *record.Transition) {
	if t := k.cur(); t != nil {
		if kind == record.PPYield {
			t.yields++
		}
		switch m, inLock := t.inFunc(record.MutexLock); {
		case kind == record.PPYield && inLock:
			k.block(t, nil)
			t.waitMutex = m
		case (kind == record.PPYield && t.yields >= TooManyYields) || t.atomics >= TooManyXchgsWithPPs:
			var w []waitRange
			for _, a := range tr.Accesses {
				if !a.Write || a.Atomic {
					w = append(w, waitRange{a.Addr, a.Addr + uint64(a.Size)})
				}
			}
			k.block(t, w)
		}
	}
	forced := false
	if k.st.hblocked > 0 {
		forced = true
		for i := range k.st.threads {
			if k.st.threads[i].schedulable() {
				forced = false
				break
			}
		}
	}
	if forced {
		k.st.stuck++
	} else {
		k.st.stuck = 0
	}
}

// block marks t heuristically blocked, waiting on w.
func (k *Kernel) block(t *thread, w []waitRange) {
	if !t.hblocked {
		k.st.hblocked++
	}
	t.hblocked, t.wait = true, w
}

// unblock clears t's heuristic block; its counters stay, so a thread still
// spinning re-trips the heuristic at its next yield.
func (k *Kernel) unblock(t *thread) {
	if t.hblocked {
		k.st.hblocked--
	}
	t.hblocked, t.wait, t.waitMutex = false, nil, 0
	t.spinning, t.spinDirty = false, true
}

// spinLoops blocks the thread that just ran if it spins (spin.go), or if
// it yielded inside the reference library's mutex_lock (which waits for
// that mutex's unlock: the one thesis heuristic that is exact, and only
// for that implementation).
func (k *Kernel) spinLoops(kind record.PPKind, tr *record.Transition) {
	t := k.cur()
	if t == nil || !t.canRun() || t.hblocked {
		return
	}
	if m, inLock := t.inFunc(record.MutexLock); kind == record.PPYield && inLock && k.refMutex {
		// The reference mutex_t's lock word is its first int: while it
		// is held the exchange the thread retries fails and changes
		// nothing, so it waits for a write to that word (the unlock's,
		// or the return of mutex_unlock: wakeMutexWaiters).
		if v, ok := k.mem.Read32(m); ok && v != 0 {
			k.block(t, []waitRange{{m, m + 4}})
			t.waitMutex = m
			k.releaseSpin(t.spin)
			t.spin, t.spinDirty = nil, true
			return
		}
	}
	k.spinAfter(t, tr)
}

// wakeRange wakes the spinning threads waiting on memory that overlaps
// [addr, addr+size), which a free or remove_pages just changed.
func (k *Kernel) wakeRange(addr, size uint64) {
	if k.st.hblocked > 0 && !k.cfg.ThesisHeuristics {
		k.wakeWaiters(addr, size)
	}
}

// wakeMutexWaiters unblocks the threads that yielded inside mutex_lock(m):
// it has just been released.
func (k *Kernel) wakeMutexWaiters(m uint64) {
	for i, t := range k.st.threads {
		if t.hblocked && t.waitMutex == m {
			t = k.own(i)
			t.yields, t.atomics = 0, 0
			k.unblock(t)
		}
	}
}

// wakeWaiters unblocks every other heuristically blocked thread waiting on
// memory that overlaps [addr, addr+size): the conflicting write it waited
// for (thesis check_unblock_yield_loop).
func (k *Kernel) wakeWaiters(addr, size uint64) {
	for i, t := range k.st.threads {
		if !t.hblocked || i == k.st.cur {
			continue
		}
		for _, r := range t.wait {
			if addr < r.hi && r.lo < addr+size {
				t = k.own(i)
				t.yields, t.atomics = 0, 0
				k.unblock(t)
				break
			}
		}
	}
}

// spinDeadlock reports threads that all spin in yield loops.
func (k *Kernel) spinDeadlock() {
	if k.cfg.SVCOMP {
		k.st.ended = true
		return
	}
	k.threadsBug(fmt.Sprintf("threads %%s all wait in yield loops for each other (each yielded %d+ times with no other progress for %d preemption points; thesis §3.4.6)",
		TooManyYields, DeadlockFPMaxAttempts), func(t *thread) string {
		what := fmt.Sprintf("spins (%d yields without progress)", t.yields)
		if n := len(t.calls); n > 0 {
			what += fmt.Sprintf(" inside %s(0x%x)", t.calls[n-1].fn, t.calls[n-1].arg)
		}
		return what
	})
}
