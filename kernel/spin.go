package kernel

import (
	"fmt"
	"landslide/emu/elfsym"
	"slices"
	"strings"

	"landslide/record"
)

// Spin loops (Config.ThesisHeuristics off, the default).
//
// A thread that waits for another by re-reading memory would run for ever
// under a schedule that never runs the other, and every execution where
// it iterates once more is another execution to explore. The kernel
// blocks such a thread only when it has provably made no progress: one
// iteration of its loop returned it to a state it was in before, and
// nothing it did in between changed anything. Then running it again, as
// long as what it read is unchanged, repeats that iteration exactly, and
// the executions where it does are stutter-equivalent to those where it
// waits: blocking it until another thread writes what it read drops no
// reachable state. This is the standard treatment of await loops (GenMC's
// spin-assume, VSync's await model checking), decided here at run time on
// the machine's state rather than on the compiler's loops.
//
// Precisely, the thread's window holds its states (PC, the 31 registers,
// whether it stopped at a breakpoint, before a call or at an _xbegin, and
// the bytes of its stack in use, from sp up) at its last PPs, and the
// shared locations its transitions since the first of them touched, each
// with the value it had when the transition ended. The window starts over
// at a PP after any transition that changed shared memory (a store, SC or
// AMO that wrote other bytes than were there: no other thread could have
// seen its own stack, which the state compares as a whole), made a system
// call other than yield and gettid, or had a sync event (thread creation
// or exit, allocation, output, a transaction, a nondet value, ...), and
// when another thread writes the thread's stack or wakes it. At a PP whose state equals one of the window's, if every
// location touched since that state still holds the value recorded, the
// thread is blocked, waiting on those locations: a write by another
// thread that changes one of them (or a free or remove_pages over one)
// makes it runnable again. When no thread can run, the execution is a
// deadlock as any other: a thread that spins for ever on a value no
// thread will write is a bug, never a verification.
//
// A loop with no PP in it (a plain load under the default PP set) is
// found inside the transition: after spinProbeAt instructions the kernel
// marks the thread's state at its current instruction and runs on to the
// next time it is there (a temporary breakpoint); the same registers and
// stack with no shared memory changed since is the same state again, with
// nothing else running in between. The transition then ends there with a PP
// (record.PPSpin) and the thread blocks as above. Otherwise the mark moves
// on, up to spinProbeHits times, and the probe starts again twice as far
// into the transition, until the infinite-loop heuristic's limit.
//
// One of the thesis's heuristics stays, where it is exact: a thread that
// yields inside the reference library's mutex_lock (sdk/thrlib/mutex.c)
// waits for that mutex's unlock, since the exchange it retries cannot
// succeed before and changes nothing (Kernel.refMutex). The others
// (TooManyYields, TooManyXchgsWithPPs, MaxYieldStreak and the
// false-positive deadlock avoidance) can drop legal executions; they run
// only with Config.ThesisHeuristics.
// ThesisHeuristicsCaveat is the caveat of an exploration under
// Config.ThesisHeuristics.
const ThesisHeuristicsCaveat = "the thesis's loop heuristics (--thesis-heuristics) block a thread after counting its yields or atomics and can drop legal executions: this is no verification"

const (
	spinStates    = 32       // PPs of a window compared with the thread's state
	spinLocs      = 512      // locations a probe holds before it gives up
	spinStackMax  = 16 << 10 // stack bytes in use beyond which a state is not noted
	spinProbeAt   = 20_000   // instructions into a transition before the first probe
	spinProbeHits = 16       // marks one probe tries
)

// spinState is a thread's state at a PP: what, with shared memory,
// decides what it does next.
type spinState struct {
	pc    uint64
	regs  [32]uint64 // x0..x31
	flags uint8
	stack []byte // [sp, top of stack)
}

func (a *spinState) same(b *spinState) bool {
	return a.pc == b.pc && a.flags == b.flags && a.regs == b.regs && string(a.stack) == string(b.stack)
}

// spinLoc is a location a window's transitions touched, with its value.
type spinLoc struct {
	addr uint64
	size uint8
	val  uint64
}

// spinNode is one state of a thread's window, newest first: the state at
// a PP, and the shared locations (with their values when it was noted)
// that the transition into it touched. Nodes are never written once made,
// so a snapshot shares a window as it is.
type spinNode struct {
	prev  *spinNode
	depth int // nodes in the chain, this one included
	st    spinState
	locs  []spinLoc
	// made is Kernel.copies when the node was made: if no copy of the
	// state was taken since, only its thread refers to it.
	made uint64
}

// spinProbe is a probe for a loop inside the current transition.
type spinProbe struct {
	mark  spinState
	temp  bool // the breakpoint at the mark's pc is the probe's
	dirty bool // shared memory changed since the mark
	hits  int
	locs  []spinLoc
}

const (
	spinAtBreak = 1 << iota
	spinPreSync
	spinAtXbegin
)

func (t *thread) spinFlags() uint8 {
	var f uint8
	if t.atBreak {
		f |= spinAtBreak
	}
	if t.preSync {
		f |= spinPreSync
	}
	if t.atXbegin {
		f |= spinAtXbegin
	}
	return f
}

// spinPure reports whether a system call leaves everything as it was
// (for the window: a loop that makes it can still be a spin).
func spinPure(num uint64) bool { return num == SysYield || num == SysGettid }

// spinSync reports whether a transition's sync events are progress: any
// but the entry and return of sync functions (the calls are in the
// registers and stack already), fences, and looking at another thread's
// run state.
func spinSync(tr *record.Transition) bool {
	for _, e := range tr.Sync {
		switch e.Kind {
		case record.SyncEnter, record.SyncReturn, record.SyncFence:
		case record.SyncRunState:
			if e.Arg != record.RunStateRead {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// spinAfter updates the window of t, which just ran tr and is still
// runnable, and blocks t if it spins (see the package comment above).
func (k *Kernel) spinAfter(t *thread, tr *record.Transition) {
	now, ok := k.spinNow(t, t.spin)
	if t.spinDirty || spinSync(tr) || !ok {
		t.spinDirty = false
		n := t.spin
		t.spin = nil
		if ok {
			if n != nil && n.made == k.copies {
				// Only this thread refers to its newest node: a window
				// starting over takes it (as optimal DPOR's re-runs,
				// which take no snapshot, start over at each write),
				// and recycles the older ones no copy shares.
				k.releaseSpin(n.prev)
				*n = spinNode{depth: 1, st: now, made: k.copies}
				t.spin = n
			} else {
				t.spin = k.newSpinNode()
				*t.spin = spinNode{depth: 1, st: now, made: k.copies}
			}
		}
		return
	}
	var locs []spinLoc
	for _, a := range tr.Accesses {
		if v, ok := k.peek(a.Addr, a.Size); ok {
			l := spinLoc{a.Addr, a.Size, v}
			if !slices.Contains(locs, l) {
				locs = append(locs, l)
			}
		}
	}
	// Compare with the window's states, newest first; the locations
	// touched since a state are those of the transitions into the newer
	// ones, and this one's.
	since := append(k.spinSince[:0], locs...) // a scratch buffer: spinBlock copies what it keeps
	defer func() { k.spinSince = since[:0] }()
	n := t.spin
	for i := 0; n != nil && i < spinStates; i, n = i+1, n.prev {
		if n.st.same(&now) && k.unchanged(since) {
			k.spinBlock(t, since)
			return
		}
		since = append(since, n.locs...)
		if len(since) > spinLocs {
			break
		}
	}
	prev := t.spin
	if prev != nil && prev.depth >= 2*spinStates {
		old := prev
		prev = trimSpin(prev, spinStates)
		k.releaseSpin(old)
	}
	depth := 1
	if prev != nil {
		depth = prev.depth + 1
	}
	n = k.newSpinNode()
	*n = spinNode{prev: prev, depth: depth, st: now, locs: locs, made: k.copies}
	t.spin = n
}

// maxSpinFree bounds the spin nodes the kernel keeps for reuse.
const maxSpinFree = 4096

// newSpinNode is a node for a window: one releaseSpin recycled, or a
// new one. The caller sets every field.
func (k *Kernel) newSpinNode() *spinNode {
	if n := len(k.spinFree); n > 0 {
		s := k.spinFree[n-1]
		k.spinFree = k.spinFree[:n-1]
		return s
	}
	return new(spinNode)
}

// releaseSpin recycles the nodes of chain c, a window its thread drops,
// that no copy of the state shares: those made since the last copy
// (made == Kernel.copies; made never grows along prev, so the walk stops
// at the first shared one). Only the nodes are reused, never their
// slices: a stack's bytes may be shared by the node before, and a node
// trimSpin copied shares its locs. A window belongs to one thread.
func (k *Kernel) releaseSpin(c *spinNode) {
	for ; c != nil && c.made == k.copies && len(k.spinFree) < maxSpinFree; c = c.prev {
		k.spinFree = append(k.spinFree, c)
	}
}

// trimSpin copies the newest n nodes of a chain (a window only ever
// compares those).
func trimSpin(c *spinNode, n int) *spinNode {
	var keep []*spinNode
	for ; c != nil && len(keep) < n; c = c.prev {
		keep = append(keep, c)
	}
	var out *spinNode
	for i := len(keep) - 1; i >= 0; i-- {
		d := 1
		if out != nil {
			d = out.depth + 1
		}
		out = &spinNode{prev: out, depth: d, st: keep[i].st, locs: keep[i].locs}
	}
	return out
}

// spinNow is the running thread t's state now; false if its stack in use
// is too big to compare (or unknown). The stack shares the bytes of
// prev's when they are the same.
func (k *Kernel) spinNow(t *thread, prev *spinNode) (spinState, bool) {
	s := spinState{pc: k.cpu.PC, flags: t.spinFlags()}
	copy(s.regs[:], k.cpu.X[:32])
	s.regs[0] = 0
	sp := k.cpu.X[2]
	if t.stackLo >= t.stackHi || sp < t.stackLo || sp > t.stackHi || t.stackHi-sp > spinStackMax {
		return s, false
	}
	n := int(t.stackHi - sp)
	if cap(k.spinBuf) < n {
		k.spinBuf = make([]byte, n)
	}
	buf := k.spinBuf[:n]
	if k.mem.ReadBytes(sp, buf) != nil {
		return s, false
	}
	if prev != nil && string(prev.st.stack) == string(buf) {
		s.stack = prev.st.stack
	} else {
		s.stack = slices.Clone(buf)
	}
	return s, true
}

// peek reads 1, 2, 4 or 8 bytes of guest memory.
func (k *Kernel) peek(addr uint64, size uint8) (uint64, bool) {
	if size == 0 || size > 8 {
		return 0, false
	}
	var b [8]byte
	if k.mem.ReadBytes(addr, b[:size]) != nil {
		return 0, false
	}
	var v uint64
	for i := int(size) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, true
}

// unchanged reports whether every location still holds its value.
func (k *Kernel) unchanged(locs []spinLoc) bool {
	for _, l := range locs {
		if v, ok := k.peek(l.addr, l.size); !ok || v != l.val {
			return false
		}
	}
	return true
}

// spinBlock blocks t, which spins: it waits for a write to locs.
func (k *Kernel) spinBlock(t *thread, locs []spinLoc) {
	w := make([]waitRange, 0, len(locs))
	for _, l := range locs {
		w = append(w, waitRange{l.addr, l.addr + uint64(l.size)})
	}
	k.block(t, w)
	t.spinning = true
	t.spinPC = k.cpu.PC
	k.releaseSpin(t.spin)
	t.spin, t.spinDirty = nil, true
}

// startProbe marks the running thread's state at the current instruction
// (see the package comment above); it reports false where it cannot
// (another breakpoint there).
func (k *Kernel) startProbe() bool {
	pc := k.cpu.PC
	if k.cpu.HasBreakpoint(pc) {
		return false
	}
	mark, ok := k.spinNow(k.cur(), nil)
	if !ok {
		return false
	}
	k.probe = &spinProbe{mark: mark, temp: true}
	k.cpu.SetBreakpoint(pc)
	k.cpu.ResumeFromBreakpoint() // the thread is there now: run on to the next time
	return true
}

// endProbe removes the probe and its breakpoint.
func (k *Kernel) endProbe() {
	if k.probe == nil {
		return
	}
	if k.probe.temp {
		k.cpu.ClearBreakpoint(k.probe.mark.pc)
	}
	k.probe = nil
}

// probeHit handles the probe's breakpoint: the thread is where it was
// marked. The same registers and stack with no shared memory changed is
// a spin: the transition ends here (PPSpin) and the thread blocks.
// Otherwise the mark moves here, or the probe gives up.
func (k *Kernel) probeHit() (record.PP, bool) {
	p := k.probe
	t := k.cur()
	now, ok := k.spinNow(t, nil)
	if ok && !p.dirty && now.same(&p.mark) {
		pc := k.cpu.PC
		locs := p.locs
		for i := range locs {
			locs[i].val, _ = k.peek(locs[i].addr, locs[i].size)
		}
		k.endProbe()
		t.atBreak = true
		k.ppStack = k.ppStackAt(pc)
		k.spinBlock(t, locs)
		return record.PP{Kind: record.PPSpin, PC: pc, Func: k.funcName(pc)}, true
	}
	p.hits++
	if p.hits >= spinProbeHits || !ok {
		k.endProbe()
	} else {
		now.pc = p.mark.pc
		p.mark, p.dirty, p.locs = now, false, p.locs[:0]
	}
	k.cpu.ResumeFromBreakpoint()
	return record.PP{}, false
}

// probeNote adds a shared location the probed loop touched.
func (p *spinProbe) note(addr uint64, size uint8) {
	for _, l := range p.locs {
		if l.addr == addr && l.size == size {
			return
		}
	}
	if len(p.locs) < spinLocs {
		p.locs = append(p.locs, spinLoc{addr: addr, size: size})
	} else {
		p.dirty = true // too much to wait on: no spin
	}
}

// spinText says what a spinning thread waits for, for a deadlock report.
func (k *Kernel) spinText(t *thread) string {
	var where []string
	for i, r := range t.wait {
		if i == 4 {
			where = append(where, "...")
			break
		}
		where = append(where, k.addrText(r.lo))
	}
	what := "no memory at all"
	if len(where) > 0 {
		what = "a write to " + strings.Join(where, ", ")
	}
	return fmt.Sprintf("spins at 0x%x: its loop came back to the same state with nothing changed, and it waits for %s", t.spinPC, what)
}

// addrText names a data address (DataName), else gives the number.
func (k *Kernel) addrText(a uint64) string {
	if n := k.DataName(a); n != "" {
		return n
	}
	return fmt.Sprintf("0x%x", a)
}

// DataName names a data address in the machine's current state: a
// global by name and offset ("acct+4"), a live heap block by its number
// and the function that allocated it ("heap block 3 from thr_create+8"),
// a thread's stack by the thread ("thread 2's stack"); "" for none of
// these.
func (k *Kernel) DataName(a uint64) string {
	if name, start, ok := k.syms.ObjectAt(a); ok {
		name = elfsym.Demangle(name)
		if a == start {
			return name
		}
		return fmt.Sprintf("%s+%d", name, a-start)
	}
	if b := k.st.heap.blockAt(a); b != nil {
		from := ""
		for i, pc := range b.allocStack {
			if i > 0 && pc >= 4 {
				pc -= 4 // a return address: its call names the frame
			}
			if fn, _, ok := k.syms.FuncAt(pc); ok && fn != "malloc" && fn != "calloc" && fn != "realloc" && fn != "_malloc" {
				from = " from " + fn
				break
			}
		}
		name := fmt.Sprintf("heap block %d%s", b.id, from)
		if a != b.addr {
			name += fmt.Sprintf("+%d", a-b.addr)
		}
		return name
	}
	for _, t := range k.st.threads {
		if t.stackLo < t.stackHi && a >= t.stackLo && a < t.stackHi {
			if fn, below, ok := k.frameOf(t, a); ok {
				return fmt.Sprintf("%s's frame-%d on thread %d's stack", fn, below, t.tid)
			}
			return fmt.Sprintf("thread %d's stack", t.tid)
		}
	}
	return ""
}

// frameOf finds the frame of thread t's stack (as it is now) that holds
// address a: the function whose frame it is, and how far a lies below
// the frame's CFA (the sp at the call into it). ok is false for stack
// memory outside every frame (below sp, or above the outermost frame).
func (k *Kernel) frameOf(t *thread, a uint64) (fn string, below uint64, ok bool) {
	at, _, cfa, found := k.frameAt(t, a)
	if !found {
		return "", 0, false
	}
	name, _, found := k.syms.FuncAt(at)
	return name, cfa - a, found
}

// frameAt finds the frame of thread t's stack that holds address a: a pc
// in its function, and its memory [lo, cfa).
func (k *Kernel) frameAt(t *thread, a uint64) (pc, lo, cfa uint64, ok bool) {
	pc, ra, sp, fp := k.unwindRegs(t)
	frames, cfas := k.syms.UnwindCFA(pc, ra, sp, fp, k.mem.Read64, 32)
	lo = sp
	for i, cfa := range cfas {
		if cfa < lo {
			break // not moving up the stack: the unwinder lost the frame
		}
		if a >= lo && a < cfa {
			at := frames[i]
			if i > 0 && at >= 4 {
				at -= 4 // a return address: its call names the frame
			}
			return at, lo, cfa, true
		}
		lo = cfa
	}
	return 0, 0, 0, false
}
