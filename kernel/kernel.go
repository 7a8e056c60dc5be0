package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"landslide/emu/cpu"
	"landslide/emu/elfsym"
	"landslide/emu/mem"
	"landslide/record"
)

// DefaultSyncPPs are the functions whose entry is a PP by default.
var DefaultSyncPPs = []string{record.MutexLock.String(), record.MutexUnlock.String()}

// Thesis constants (§3.4.6, check_infinite_loop). The last four and
// MaxYieldStreak are the loop heuristics that apply only with
// Config.ThesisHeuristics (spin.go says why).
const (
	ProgressTriggerFactor = 4000 // instructions since the last PP, × average transition
	ProgressMinAverage    = 1000 // floor of that average
	TooDeepFirstBranch    = 4000 // PPs in one execution
	TooManyYields         = 10   // yields without interesting activity: yield-blocked
	TooManyXchgsWithPPs   = 20   // atomics across PPs without other activity: xchg-blocked
	DeadlockFPMaxAttempts = 128  // PPs with every thread yield-blocked: a deadlock
	// MaxYieldStreak bounds how often a thread may be chosen again right
	// after its own yield while another thread could run. A yield is a PP
	// where any thread may run, the yielder included (the Quicksand
	// paper's Fig. 1 needs "xadd; yield; xadd" by one thread), but a
	// thread re-chosen after every yield starves the others: a loop that
	// yields while waiting for another thread (and makes library calls,
	// which the yield-loop heuristic counts as progress) would otherwise
	// be explored round after round until the depth cap reports a false
	// livelock. Not a thesis constant.
	MaxYieldStreak = 2
)

// The default limits of Config, chosen from what a live thread costs
// (BenchmarkThreads; BENCHMARKS.md, "The thread limit", has the figures).
//
// A thread's guest stack (PthreadStackSize, 256 KiB) is charged against
// MaxMemory but mapped copy-on-write: only the pages it writes exist,
// about 1.2 KB of host memory per thread. What grows with the threads is
// the thread table (unsafe.Sizeof(thread{}), 456 bytes a thread), which
// every Snapshot and Restore copied until 2026-11-28: 0.6 to 1 µs per
// live thread for the pair, against 3.5 µs for a whole transition of a
// 2-thread program. An explorer keeps one snapshot per PP of its branch,
// so a branch held PPs × live threads × 456 bytes: with 256 threads and
// the 4000 PPs of MaxPPs at most 470 MB per explorer (a program that
// creates 255 threads and joins them peaked at 234 MB explored, 265 MB
// with every access a PP). Snapshots now share the threads a step does
// not write (Kernel.own): a snapshot holds 8 bytes per live thread and
// a copy of each thread written since the one before, so that bound is
// a bound, not what is used. That covers the suites that need the most (SCTBench's
// twostage_100 keeps about 100 threads alive) with room, and the stacks
// take 64 MiB, a quarter of DefaultMaxMemory. 1024 threads would allow
// 1.9 GB per explorer, their stacks alone would fill DefaultMaxMemory,
// and creating them would take 2048 of the 4000 PPs (two per creation).
const (
	DefaultMaxThreads = 256
	DefaultMaxMemory  = 256 << 20
)

// Filter is a within_function / without_function directive.
type Filter struct {
	Within bool
	Func   string
}

// Config configures a machine. The zero value is the default.
type Config struct {
	// SyncPPs names functions whose entry is a PP. nil means
	// DefaultSyncPPs; an empty non-nil slice means none.
	SyncPPs []string
	// DataRacePCs are instruction addresses to preempt before.
	DataRacePCs []uint64
	// Filters are within/without directives applied, in order, to
	// configurable PPs (thesis §3.4.1).
	Filters []Filter
	// NoTrack turns off the recording of shared accesses (the heap checker
	// stays on).
	NoTrack bool
	// MaxThreads limits live threads (default DefaultMaxThreads). A
	// program that would go past it ends its execution at a limit
	// (record.Bug.IsLimit), not a bug.
	MaxThreads int
	// MaxMemory limits guest memory from new_pages, malloc and pthread
	// stacks (default DefaultMaxMemory), likewise.
	MaxMemory uint64
	// StackSize is the main thread's stack (default 1 MiB).
	StackSize uint64
	// MaxInstructions is the budget of one execution (default 2e9).
	MaxInstructions uint64
	// MaxPPs bounds the PPs of one execution; more is an infinite-loop bug
	// (default TooDeepFirstBranch; TooDeepPreemptEverywhere with
	// data-race PPs).
	MaxPPs int
	// Args are argv (argv[0] defaults to "prog").
	Args []string
	// HTM configures transactional memory (sdk's htm.h).
	HTM HTMConfig
	// EveryAccess makes every shared access a PP (everyaccess.go).
	EveryAccess bool
	// ModelThreads runs the SDK's reference thr_create, thr_join and
	// thr_exit as kernel calls, one event each (thrlib.go).
	ModelThreads bool
	// LineupSerial runs the calls of a linearizability test one at a
	// time, to learn its sequential specification (lineup.go).
	LineupSerial bool
	// ThesisHeuristics turns on the thesis's loop heuristics (§3.4.6:
	// TooManyYields, TooManyXchgsWithPPs, MaxYieldStreak, the
	// false-positive deadlock avoidance), which block a thread after
	// counting its yields or atomics and can drop legal executions, in
	// place of the spin-loop rule (spin.go), which blocks a thread only
	// when it provably makes no progress. For reproducing the thesis's
	// figures; an exploration under them is no verification.
	ThesisHeuristics bool
	// WaitForThreads is Nidhugg's and GenMC's convention for the end of
	// a program: returning from main ends the main thread only (as
	// pthread_exit would, main's result being the exit status) and the
	// process ends when its last thread has. Without it, returning from
	// main ends the process as POSIX says, whatever the other threads
	// were doing; exit() ends it either way.
	WaitForThreads bool
	// SVCOMP applies SV-COMP's conventions (svcomp.go): reach_error is
	// the violation, abort and a failed assume end the program without a
	// bug, __VERIFIER_atomic sections run atomically.
	SVCOMP bool
	// SharedStack are stack locations (8-byte granules, sorted) that
	// another thread than their owner was seen to access: the owner's own
	// accesses to them are recorded too (SharedStackSeen learns them; the
	// thesis leaves a thread's own stack out only as an optimisation).
	SharedStack []uint64
}

func (c *Config) fill() {
	if c.SyncPPs == nil {
		c.SyncPPs = DefaultSyncPPs
	}
	if c.MaxThreads == 0 {
		c.MaxThreads = DefaultMaxThreads
	}
	if c.MaxMemory == 0 {
		c.MaxMemory = DefaultMaxMemory
	}
	if c.StackSize == 0 {
		c.StackSize = 1 << 20
	}
	if c.MaxInstructions == 0 {
		c.MaxInstructions = 2_000_000_000
	}
	if c.MaxPPs == 0 {
		c.MaxPPs = TooDeepFirstBranch
		if len(c.DataRacePCs) > 0 {
			// Data-race PPs multiply the PPs of a correct execution by
			// the racing accesses it makes (SCTBench's micro_10: ten
			// threads of 200 racing increments, 4,000 PPs at least):
			// the thesis's bound counts sync PPs.
			c.MaxPPs = TooDeepPreemptEverywhere
		}
	}
	if len(c.Args) == 0 {
		c.Args = []string{"prog"}
	}
}

// ErrBudget is returned by Step when the execution's instruction budget is
// spent without a bug.
var ErrBudget = record.ErrBudget

// outNode is one piece of guest output in a persistent list, so that a
// snapshot holds its output by pointer.
type outNode struct {
	prev *outNode
	data []byte
	size int // total bytes up to and including this node
}

// region is a new_pages allocation.
type region struct {
	base, size uint64
}

type removedRegion struct {
	region
	thread record.TID
	stack  []uint64
}

// state is everything a snapshot restores besides memory and the CPU.
type state struct {
	// threads, in ascending tid, are shared with the snapshots taken since
	// each was last written: Kernel.own copies one before it is written
	// (thread.gen).
	threads  []*thread
	cur      int // index of the thread on the CPU, -1 before the first step
	nextTID  record.TID
	clock    uint64 // ticks added by sleeping
	status   int
	ended    bool
	bug      *record.Bug
	out      *outNode
	heap     heapState
	regions  []region
	removed  []removedRegion
	pps      int
	lastPP   record.PPKind
	yieldTo  record.TID
	sumInstr uint64 // instructions over completed transitions
	nTrans   uint64
	// lastExited is the thread that vanished at the last PP (for Default).
	lastExited record.TID
	diag       []string // checker diagnostics (tell_landslide_dump_stack)
	// stuck counts consecutive PPs at which every runnable thread was
	// heuristically blocked and had to be woken (thesis §3.4.6).
	stuck int
	// lineupCalls counts the calls of a linearizability test, and
	// lineupThreads the threads that made them (lineup.go).
	lineupCalls, lineupThreads int
	// hblocked counts heuristically blocked threads (fast path of Access).
	hblocked int
	// yieldStreak counts consecutive yields by streakTID with no other
	// thread running in between.
	yieldStreak int
	streakTID   record.TID
	// work is what system calls cost beyond their one instruction: one
	// instruction per workBytes bytes they copy. It counts against
	// MaxInstructions, so no guest can make the kernel work unboundedly.
	work uint64
	// wtx is the weak transaction in flight (HTMConfig.Weak), if any.
	wtx *weakTxn
	// pthreads are the threads pthread_create made that no join has
	// reaped; setPthreads replaces them unless pthreadsMade, the
	// Kernel.copies when the slice was made, says that no copy of the
	// state shares it.
	pthreads     []pthreadRec
	pthreadsMade uint64
	// atomicBroken: a thread ran while another was inside an SV-COMP
	// atomic section (svcomp.go).
	atomicBroken bool
}

// clone copies the state for a snapshot. Only the array of threads is
// copied: a thread is copied when it is next written (Kernel.own, after
// Snapshot's new epoch); every other slice is replaced, never written in
// place (appends use full slice expressions), or written in place only
// where the Kernel's copies count shows that no copy shares it
// (pthreads), and the heap is copy-on-write (heapState.own).
func (s *state) clone() state { return s.cloneInto(nil) }

// cloneInto is clone with the array of threads copied into buf's when it
// is large enough (Restore passes the live state's own, which nothing else
// refers to once it is replaced).
func (s *state) cloneInto(buf []*thread) state {
	s.heap.shared = true
	c := *s
	c.threads = append(buf[:0], s.threads...)
	return c
}

// cloneDeep is clone with every thread copied now, for a copy taken
// within a step (a transaction's start): the pointers the step holds to
// the live threads stay the live state's.
func (s *state) cloneDeep() state {
	c := s.clone()
	c.threads = make([]*thread, len(s.threads))
	for i, t := range s.threads {
		u := *t
		u.gen = 0
		c.threads[i] = &u
	}
	return c
}

// Kernel is one guest process on one machine. It implements record.Machine.
type Kernel struct {
	cfg Config
	img *elfsym.Image
	// tlsInit is the TLS template's initial bytes (tls.go).
	tlsInit []byte
	syms    *elfsym.Symbols
	mem     *mem.Memory
	cpu     *cpu.CPU

	st state

	// Persistent across restores.
	ppFuncs    map[uint64]string          // entry → name, for sync PPs
	eventFuncs map[uint64]record.SyncFunc // entry → function, for sync events
	racePCs    map[uint64]bool
	// scPCs are the data-race PPs at an SC whose LR is a PP too: no PP
	// while the LR's reservation is held.
	scPCs map[uint64]bool
	// thrFuncs are the modelled thread functions (ModelThreads), by
	// entry; thrExit is thr_exit's entry, where their children return.
	thrFuncs map[uint64]record.SyncFunc
	thrExit  uint64
	// SV-COMP mode (svcomp.go): the error functions' and the atomic
	// functions' entries, and __VERIFIER_atomic_begin's and _end's.
	svErrors       map[uint64]string
	svAtomic       map[uint64]bool
	svBegin, svEnd uint64
	// sampled: a nondet call took a value from a cut domain (Sampled).
	sampled bool
	// sharedStack holds cfg.SharedStack; learned the granules of other
	// threads' stacks this machine saw accessed (SharedStackSeen).
	sharedStack map[uint64]bool
	learned     map[uint64]bool

	// The transition in progress.
	tr      *record.Transition
	ppStack []uint64 // the stack at the PP ending tr
	seen    map[record.Access]struct{}
	seenFor *record.Transition
	// scratchTr is the transition StepScratch reuses; spinFree the
	// spin-window nodes releaseSpin recycled.
	scratchTr *record.Transition
	// bufAcc, bufSync and bufOwn are where a kept transition's records
	// grow (step): it takes exact-size copies at its end, so a
	// transition costs one allocation for each, not one per doubling.
	bufAcc    []record.Access
	bufSync   []record.SyncEvent
	bufOwn    []record.Access
	spinFree  []*spinNode
	violation *heapViolation
	// capture, when not nil, makes Access record the stack at the first
	// access by each instruction it holds with a nil stack
	// (AccessStacks).
	capture map[uint64][]uint64
	// runMemo is Runnable's answer while the state stays as it is, between
	// steps: Step and Restore clear it (runMemoOK), and none is kept
	// while a step runs (stepping). The explorer asks at every node and
	// at each step of a re-run; its callers never modify the slice.
	runMemo             []record.TID
	runMemoOK, stepping bool
	spinSince           []spinLoc // spinAfter's buffer
	// copies counts the copies of the state that outlive a step
	// (snapshots, a transaction's start): a spin node made since the last
	// is the thread's alone (spinAfter reuses it).
	copies uint64
	// epoch counts the snapshots taken: a thread whose gen is not the
	// epoch may be shared with one and is copied before it is written
	// (own). Snapshots are taken between steps only, so a thread pointer
	// taken with own stays the live thread's for the rest of the step.
	epoch uint64
	// threadFree are copies of threads that no snapshot shares, recycled
	// by own: Restore drops the live copies made in its epoch here.
	threadFree []*thread
	// snapFree are released snapshots (Release), for Snapshot to reuse.
	snapFree []*snapshot
	// values, when not nil, makes Access record the value the first access
	// by each instruction it holds read or wrote (StepValues).
	values map[uint64]*uint64
	// preStep is the memory at the start of the transition of a thread
	// with a weak transaction in flight: the old values of its undo log.
	preStep *mem.Snapshot
	// txn is the running thread's transaction (htm.go), within one Step.
	txn *txnState
	// evented: the transition in progress has made its shared access
	// (EveryAccess); lrHeld: that access was an LR, whose SC goes with it.
	evented, lrHeld bool
	// spinBuf is scratch space for reading a thread's stack (spin.go).
	spinBuf []byte
	// probe looks for a spin loop inside the transition in progress.
	probe *spinProbe
	// refMutex: the program's mutex_lock is the reference library's
	// (sdk/thrlib/mutex.c), whose yield waits for the unlock exactly.
	refMutex bool
}

// New loads the ELF image and prepares its main thread. Errors are about
// the input (a bad ELF, an unknown PP symbol): the guest has not run yet.
func New(image []byte, cfg Config) (*Kernel, error) {
	cfg.fill()
	m := mem.New()
	img, err := elfsym.Load(image, m)
	if err != nil {
		return nil, err
	}
	k := &Kernel{
		copies: 1, // 0 is the made of nodes from elsewhere (checkpoints, trimSpin): never alone
		epoch:  1, // 0 is the gen of threads from elsewhere (checkpoints, cloneDeep): never owned
		cfg:    cfg, img: img, syms: img.Symbols, mem: m, cpu: cpu.New(m),
		ppFuncs: map[uint64]string{}, eventFuncs: map[uint64]record.SyncFunc{},
		racePCs: map[uint64]bool{},
		seen:    map[record.Access]struct{}{},
		learned: map[uint64]bool{},
	}
	if len(cfg.SharedStack) > 0 {
		k.sharedStack = map[uint64]bool{}
		for _, g := range cfg.SharedStack {
			k.sharedStack[g&^7] = true
		}
	}
	k.cpu.Watcher = k
	if !cfg.NoTrack {
		k.cpu.Tracker = k
	}
	if cfg.EveryAccess {
		if cfg.NoTrack {
			return nil, fmt.Errorf("every shared access a preemption point needs access tracking (NoTrack)")
		}
		k.cpu.Gate = k
	}
	for _, name := range cfg.SyncPPs {
		addr, _, ok := k.syms.Lookup(name)
		if !ok {
			if isDefaultPP(name) && sameStrings(cfg.SyncPPs, DefaultSyncPPs) {
				continue // a program without a mutex: nothing to preempt on
			}
			return nil, fmt.Errorf("preemption point %q: no such function in the program", name)
		}
		k.ppFuncs[addr] = name
		k.cpu.SetBreakpoint(addr)
	}
	// The thread-library functions whose entry and return are recorded
	// as sync events (with their first argument), when the binary
	// defines them.
	for _, fn := range record.SyncFuncs() {
		if addr, _, ok := k.syms.Lookup(fn.String()); ok {
			k.eventFuncs[addr] = fn
			k.cpu.SetBreakpoint(addr)
		}
	}
	if addr, _, ok := k.syms.Lookup(record.MutexLock.String()); ok {
		file, _, _ := k.syms.LineAt(addr)
		k.refMutex = file == "sdk/thrlib/mutex.c"
	}
	if cfg.SVCOMP {
		k.svcompSetup()
	}
	if cfg.ModelThreads {
		if err := k.modelThreads(); err != nil {
			return nil, err
		}
	}
	for _, pc := range cfg.DataRacePCs {
		if !k.syms.IsInstruction(pc) {
			return nil, fmt.Errorf("data-race preemption point 0x%x is not an instruction of the program", pc)
		}
		k.racePCs[pc] = true
		k.cpu.SetBreakpoint(pc)
		if lr, ok := k.lrBefore(pc); ok {
			// A PP at an SC is one at its LR (see breakpoint).
			k.racePCs[lr] = true
			k.cpu.SetBreakpoint(lr)
			if k.scPCs == nil {
				k.scPCs = map[uint64]bool{}
			}
			k.scPCs[pc] = true
		}
	}
	if len(cfg.Filters) > 0 {
		// Each directive names its function as the stack's frames do
		// (FuncAt): a C++ function given by its source name ("push"),
		// or an alias, matches its frames.
		filters := slices.Clone(cfg.Filters)
		for i, f := range filters {
			addr, _, ok := k.syms.Lookup(f.Func)
			if !ok {
				return nil, fmt.Errorf("within/without function %q: no such function in the program", f.Func)
			}
			if name, start, ok := k.syms.FuncAt(addr); ok && start == addr {
				filters[i].Func = name
			}
		}
		k.cfg.Filters = filters
	}
	if err := k.readTLSTemplate(); err != nil {
		return nil, err
	}
	if err := k.setupMain(); err != nil {
		return nil, err
	}
	return k, nil
}

func isDefaultPP(name string) bool {
	for _, d := range DefaultSyncPPs {
		if d == name {
			return true
		}
	}
	return false
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// setupMain maps the main stack and builds the Linux-style initial stack
// (argc, argv, envp, auxv) so that programs written for qemu-user start too.
func (k *Kernel) setupMain() error {
	size := roundUp(k.cfg.StackSize, mem.PageSize)
	lo := uint64(MainStackTop) - size
	if err := k.mem.Map(lo, size, mem.PermR|mem.PermW); err != nil {
		return fmt.Errorf("main stack: %v", err)
	}
	// The thread-local storage block at the top (tls.go), the strings
	// below it, then the vectors.
	top, err := k.tlsBlock(MainStackTop)
	if err != nil {
		return err
	}
	tp := top
	if k.img.TLS == nil {
		tp = 0
	}
	var argv []uint64
	for _, a := range k.cfg.Args {
		top -= uint64(len(a) + 1)
		k.mem.WriteBytes(top, append([]byte(a), 0))
		argv = append(argv, top)
	}
	words := []uint64{uint64(len(argv))}
	words = append(words, argv...)
	words = append(words, 0, 0, 0, 0) // argv NULL, envp NULL, AT_NULL pair
	sp := (top - uint64(8*len(words))) &^ 15
	for i, w := range words {
		k.mem.Write64(sp+uint64(8*i), w)
	}
	t := &thread{tid: 1, pc: k.img.Entry, stackLo: lo, stackHi: MainStackTop, gen: k.epoch}
	t.regs[2] = sp
	t.regs[4] = tp
	t.regs[10] = uint64(len(argv))
	t.regs[11] = sp + 8
	t.regs[12] = MainStackTop
	t.regs[13] = lo
	k.st = state{threads: []*thread{t}, cur: -1, nextTID: 2, heap: newHeap()}
	return nil
}

// Symbols returns the program's symbols (for reports).
func (k *Kernel) Symbols() *elfsym.Symbols { return k.syms }

// Output returns everything the guest has written.
func (k *Kernel) Output() []byte {
	n := k.st.out
	if n == nil {
		return nil
	}
	buf := make([]byte, n.size)
	for ; n != nil; n = n.prev {
		copy(buf[n.size-len(n.data):], n.data)
	}
	return buf
}

// ExitStatus is the process's exit status (meaningful once ended).
func (k *Kernel) ExitStatus() int { return k.st.status }

// Instructions is the number of guest instructions executed so far.
func (k *Kernel) Instructions() uint64 { return k.cpu.Instret }

// PPs is the number of transitions completed so far.
func (k *Kernel) PPs() int { return k.st.pps }

// Leaks returns the live heap blocks (meaningful once ended).
func (k *Kernel) Leaks() []record.Detail {
	var out []record.Detail
	for _, b := range k.st.heap.leaks() {
		out = append(out, record.Detail{
			Title:  fmt.Sprintf("block #%d (%d bytes at 0x%x) allocated by thread %d", b.id, b.size, b.addr, b.allocThread),
			Thread: b.allocThread, Stack: b.allocStack,
		})
	}
	return out
}

// --- record.Machine ---

// Runnable implements record.Machine.
func (k *Kernel) Runnable() []record.TID {
	if k.runMemoOK {
		return k.runMemo
	}
	out := k.runnable()
	if !k.stepping {
		k.runMemo, k.runMemoOK = out, true
	}
	return out
}

func (k *Kernel) runnable() []record.TID {
	if k.st.ended {
		return nil
	}
	var out []record.TID
	for i := range k.st.threads {
		if t := k.st.threads[i]; t.schedulable() && !k.waitsForTxn(t) && !k.callBlocked(t) {
			if out == nil {
				out = make([]record.TID, 0, len(k.st.threads)-i) // one allocation, not one per doubling
			}
			out = append(out, t.tid)
		}
	}
	if !k.cfg.ThesisHeuristics {
		return out
	}
	if k.st.lastPP == record.PPYield && k.st.yieldStreak >= MaxYieldStreak && len(out) > 1 {
		// The thread has yielded MaxYieldStreak times in a row with no
		// other thread running in between: its turn is over (see
		// MaxYieldStreak).
		if cur := k.curTID(); slices.Contains(out, cur) {
			out = slices.DeleteFunc(out, func(t record.TID) bool { return t == cur })
		}
	}
	if out == nil && k.st.hblocked > 0 {
		// Every thread that can run is heuristically blocked: the
		// heuristic may be wrong, so wake one (thesis §3.4.6,
		// try_avoid_fp_deadlock; Step counts the attempts). One, in
		// round-robin order after the current thread, and not a choice:
		// these retries are the heuristic's, not the program's
		// nondeterminism, and branching on each of up to 128 of them
		// would multiply the state space for nothing.
		cur := k.curTID()
		var first record.TID
		for _, t := range k.st.threads {
			if !t.canRun() || k.waitsForTxn(t) || k.callBlocked(t) {
				continue
			}
			if first == 0 {
				first = t.tid
			}
			if t.tid > cur {
				return []record.TID{t.tid}
			}
		}
		if first != 0 {
			return []record.TID{first}
		}
	}
	return out
}

// Default implements record.Machine: after a yield (or a sleep, exit or
// block) the next runnable thread in TID order after the current one (or
// the yield's target), otherwise the current thread.
func (k *Kernel) Default() record.Choice {
	run := k.Runnable()
	if len(run) == 0 {
		return record.Choice{}
	}
	cur := k.curTID()
	if k.st.lastPP == record.PPYield && k.st.yieldTo > 0 {
		for _, t := range run {
			if t == k.st.yieldTo {
				return record.Choice{Thread: t}
			}
		}
	}
	switchAway := k.st.lastPP == record.PPYield || k.st.lastPP == record.PPSleep
	if !switchAway {
		for _, t := range run {
			if t == cur {
				if th := k.look(cur); th != nil && th.state == stRunnable {
					return record.Choice{Thread: t}
				}
			}
		}
	}
	// Round robin: the first runnable (not sleeping, if possible) after cur.
	pick := func(awake bool) (record.TID, bool) {
		for pass := 0; pass < 2; pass++ {
			for _, t := range run {
				if (pass == 0 && t <= cur) || (pass == 1 && t > cur) {
					continue
				}
				if awake && k.look(t).state == stSleeping {
					continue
				}
				return t, true
			}
		}
		return 0, false
	}
	if t, ok := pick(true); ok {
		return record.Choice{Thread: t}
	}
	t, _ := pick(false)
	return record.Choice{Thread: t}
}

// Ended implements record.Machine.
func (k *Kernel) Ended() (bool, *record.Bug) { return k.st.ended, k.st.bug }

type snapshot struct {
	mem     *mem.Snapshot
	regs    [33]uint64
	pc      uint64
	instret uint64
	st      state
	// epoch is the Kernel's epoch this snapshot ended: the threads copied
	// in it (gen == epoch) are reachable only from this snapshot and the
	// states made from it (Release); copies is Kernel.copies before it,
	// the made of the spin-window nodes made in that epoch, likewise.
	epoch, copies uint64
	// released: Release recycled it.
	released bool
	// frozen holds a copy of each thread when verifySnapshots is on.
	frozen []thread
}

// Snapshot implements record.Machine. It must be taken between Steps.
func (k *Kernel) Snapshot() record.Snapshot {
	copies := k.copies
	k.copies++ // the copy shares the threads' spin windows (spinAfter)
	var buf []*thread
	var sn *snapshot
	if n := len(k.snapFree); n > 0 {
		sn, k.snapFree = k.snapFree[n-1], k.snapFree[:n-1]
		buf = sn.st.threads
	} else {
		sn = new(snapshot)
	}
	*sn = snapshot{mem: k.mem.Snapshot(), regs: k.cpu.X, pc: k.cpu.PC, instret: k.cpu.Instret, st: k.st.cloneInto(buf), epoch: k.epoch, copies: copies}
	k.epoch++ // and the threads themselves (own)
	if verifySnapshots {
		sn.frozen = freeze(sn.st.threads)
	}
	return sn
}

// Release implements record.Releaser: the snapshot's memory pages and
// nodes that only it reached are recycled (emu/mem M5), and so are the
// threads copied and the spin-window nodes made in the epoch it ended
// (the same argument: they are reachable only from this snapshot and the
// states made from it) and the snapshot itself. With mem.PoisonReleased
// (tests) the threads and nodes are zeroed first.
func (k *Kernel) Release(s record.Snapshot) {
	sn, ok := s.(*snapshot)
	if !ok || sn.released {
		return
	}
	k.mem.Release(sn.mem)
	for _, t := range sn.st.threads {
		// The window's nodes made in the epoch (the newest: made never
		// grows along prev); only their nodes, never the slices, which
		// an older node may share (as releaseSpin).
		for n := t.spin; sn.epoch != 0 && n != nil && n.made == sn.copies && len(k.spinFree) < maxSpinFree; {
			prev := n.prev
			if mem.PoisonReleased {
				*n = spinNode{depth: -1}
			}
			n.made = ^uint64(0) // recycled once
			k.spinFree = append(k.spinFree, n)
			n = prev
		}
	}
	for _, t := range sn.st.threads {
		// (Epoch 0 is no epoch: a checkpoint's snapshot, whose threads
		// came from elsewhere, has it.)
		if sn.epoch != 0 && t.gen == sn.epoch && len(k.threadFree) < maxThreadFree {
			if mem.PoisonReleased {
				*t = thread{tid: -1}
			}
			t.gen = 0 // recycled once
			k.threadFree = append(k.threadFree, t)
		}
	}
	clear(sn.st.threads)
	*sn = snapshot{st: state{threads: sn.st.threads[:0]}, released: true}
	if len(k.snapFree) < maxSnapFree {
		k.snapFree = append(k.snapFree, sn)
	}
}

// maxSnapFree bounds Kernel.snapFree.
const maxSnapFree = 64

// Restore implements record.Machine.
func (k *Kernel) Restore(s record.Snapshot) {
	sn := s.(*snapshot)
	if sn.released {
		panic("kernel: Restore of a released snapshot")
	}
	if sn.frozen != nil {
		sn.verify()
	}
	k.mem.Restore(sn.mem)
	k.cpu.X, k.cpu.PC, k.cpu.Instret = sn.regs, sn.pc, sn.instret
	k.cpu.ClearReservation()
	k.cpu.CancelResume() // a step cut short by a limit may have left it set
	// The live array of threads is the kernel's own (Snapshot copies it):
	// it takes the snapshot's, rather than a new one at every restore (the
	// threads are the snapshot's until written: own), and the spin-window
	// nodes made since the last copy are recycled.
	for _, t := range k.st.threads {
		k.releaseSpin(t.spin)
		if t.gen == k.epoch && len(k.threadFree) < maxThreadFree {
			k.threadFree = append(k.threadFree, t)
		}
	}
	k.st = sn.st.cloneInto(k.st.threads)
	k.runMemoOK = false
	k.tr = nil
	k.txn = nil
	k.preStep = nil
	k.endProbe()
}

// own is the live state's i-th thread, to be written: copied first when a
// snapshot may share it (its gen is not the epoch).
func (k *Kernel) own(i int) *thread {
	t := k.st.threads[i]
	if t.gen != k.epoch {
		var c *thread
		if n := len(k.threadFree); n > 0 {
			c, k.threadFree = k.threadFree[n-1], k.threadFree[:n-1]
		} else {
			c = new(thread)
		}
		*c = *t
		c.gen = k.epoch
		t = c
		k.st.threads[i] = t
	}
	return t
}

// maxThreadFree bounds Kernel.threadFree.
const maxThreadFree = 64

// find is thread tid, to be written (own), or nil.
func (k *Kernel) find(tid record.TID) *thread {
	if i := k.index(tid); i >= 0 {
		return k.own(i)
	}
	return nil
}

// look is thread tid, only to be read, or nil.
func (k *Kernel) look(tid record.TID) *thread {
	if i := k.index(tid); i >= 0 {
		return k.st.threads[i]
	}
	return nil
}

func (k *Kernel) index(tid record.TID) int {
	for i, t := range k.st.threads {
		if t.tid == tid {
			return i
		}
	}
	return -1
}

// cur is the thread on the CPU, to be written (own), or nil.
func (k *Kernel) cur() *thread {
	if k.st.cur < 0 || k.st.cur >= len(k.st.threads) {
		return nil
	}
	return k.own(k.st.cur)
}

// curLook is the thread on the CPU, only to be read, or nil.
func (k *Kernel) curLook() *thread {
	if k.st.cur < 0 || k.st.cur >= len(k.st.threads) {
		return nil
	}
	return k.st.threads[k.st.cur]
}

// isCur reports whether t is the thread on the CPU (by tid: t may be a
// copy that own has since replaced).
func (k *Kernel) isCur(t *thread) bool {
	c := k.curLook()
	return c != nil && c.tid == t.tid
}

func (k *Kernel) curTID() record.TID {
	if t := k.curLook(); t != nil {
		return t.tid
	}
	return k.st.lastExited
}

// switchTo puts tid on the CPU.
func (k *Kernel) switchTo(tid record.TID) {
	if t := k.curLook(); t != nil && t.tid == tid {
		return
	}
	if t := k.cur(); t != nil {
		t.regs, t.pc = k.cpu.X, k.cpu.PC
	}
	for i, t := range k.st.threads {
		if t.tid == tid {
			k.st.cur = i
			k.cpu.X, k.cpu.PC = t.regs, t.pc
			k.cpu.X[0] = 0
			k.cpu.ClearReservation()
			return
		}
	}
}

// now is the tick clock: deterministic, a function of the instruction
// count plus the ticks sleepers skipped.
func (k *Kernel) now() uint64 { return k.cpu.Instret/10000 + k.st.clock }

// Step implements record.Machine.
func (k *Kernel) Step(ch record.Choice) (*record.Transition, error) { return k.step(ch, false) }

// StepScratch implements record.ScratchStepper: optimal DPOR's re-runs
// read each transition's accesses and throw it away.
func (k *Kernel) StepScratch(ch record.Choice) (*record.Transition, error) { return k.step(ch, true) }

func (k *Kernel) step(ch record.Choice, scratch bool) (*record.Transition, error) {
	k.runMemoOK, k.stepping = false, true
	defer func() { k.stepping = false }()
	if k.st.ended {
		return nil, errors.New("the execution has ended")
	}
	t := k.find(ch.Thread)
	if t == nil || !t.canRun() {
		return nil, fmt.Errorf("thread %d is not runnable here (runnable: %v)", ch.Thread, k.Runnable())
	}
	if k.callBlocked(t) {
		return nil, fmt.Errorf("thread %d %s (runnable: %v)", ch.Thread, k.posixWait(t), k.Runnable())
	}
	if k.waitsForTxn(t) && ch.Value == 0 {
		return nil, fmt.Errorf("thread %d waits at an _xbegin for thread %d's transaction (runnable: %v)", ch.Thread, k.st.wtx.tid, k.Runnable())
	}
	xbegin := t.atXbegin
	if ch.Value < 0 || xbegin && ch.Value >= record.XbeginStarted {
		return nil, fmt.Errorf("choice %d:%d: not an abort status or a nondet value", ch.Thread, ch.Value)
	}
	k.noteAtomicBroken(ch.Thread)
	k.switchTo(ch.Thread)
	t = k.cur()
	if t.hblocked {
		k.unblock(t) // woken by the false-positive deadlock avoidance
	}
	if t.state == stSleeping {
		if now := k.now(); t.wake > now {
			k.st.clock += t.wake - now
		}
		t.state = stRunnable
	}
	if scratch {
		// StepScratch: the caller is done with the last scratch
		// transition; its slices take this one's records.
		if k.scratchTr == nil {
			k.scratchTr = &record.Transition{}
		}
		tr := k.scratchTr
		*tr = record.Transition{Thread: t.tid, Accesses: tr.Accesses[:0], Sync: tr.Sync[:0], Own: tr.Own[:0]}
		k.tr, k.seenFor = tr, nil
	} else {
		k.tr = &record.Transition{Thread: t.tid, Accesses: k.bufAcc[:0], Sync: k.bufSync[:0], Own: k.bufOwn[:0]}
	}
	start := k.cpu.Instret
	if t.atBreak {
		t.atBreak = false
		k.cpu.ResumeFromBreakpoint()
		k.enterFunc(k.cpu.PC)
	}
	k.ppStack = nil
	k.st.lastExited = 0
	k.txn = nil
	k.evented, k.lrHeld = false, false
	k.preStep = nil
	if k.weakOwner() {
		k.preStep = k.mem.Snapshot()
	}
	if t.atXbegin {
		k.xbegin(t, ch.Value)
	}
	pp, err := k.run(start)
	defer k.endProbe()
	for err == nil && k.serialGoesOn(pp) {
		// A call runs whole when the calls run one at a time.
		if t.atBreak {
			t.atBreak = false
			k.cpu.ResumeFromBreakpoint()
			k.enterFunc(k.cpu.PC)
		}
		pp, err = k.run(start)
	}
	tr := k.tr
	k.tr = nil
	if !scratch {
		k.keepRecords(tr)
	}
	tr.Instructions = k.cpu.Instret - start
	if err != nil {
		return tr, err
	}
	if ch.Value != 0 && !xbegin {
		if err := k.chooseNondet(ch, pp); err != nil {
			return tr, err
		}
	}
	k.st.sumInstr += tr.Instructions
	k.st.nTrans++
	tr.PP = pp
	if !k.st.ended {
		if !scratch {
			tr.Stack = k.ppStack
		}
		k.st.pps++
		k.st.lastPP = pp.Kind
		switch {
		case pp.Kind == record.PPYield && k.st.streakTID == t.tid:
			k.st.yieldStreak++
		case pp.Kind == record.PPYield:
			k.st.streakTID, k.st.yieldStreak = t.tid, 1
		case k.st.streakTID != t.tid:
			k.st.streakTID, k.st.yieldStreak = 0, 0
		}
		if k.cfg.ThesisHeuristics {
			k.noteLoops(pp.Kind, tr)
		} else {
			k.spinLoops(pp.Kind, tr)
		}
		if k.st.stuck >= DeadlockFPMaxAttempts {
			k.spinDeadlock()
		} else if k.st.pps > k.cfg.MaxPPs {
			k.bugHere(record.BugLoop, fmt.Sprintf("execution exceeded %d preemption points (thesis TOO_DEEP_0TH_BRANCH): a livelock or an unbounded loop of yields", k.cfg.MaxPPs), nil)
		} else if len(k.Runnable()) == 0 && !k.timeOut() && !k.infeasible() {
			k.deadlock()
		}
	}
	if k.st.ended {
		tr.PP = record.PP{Kind: record.PPEnd, PC: pp.PC, Func: pp.Func}
		if tr.Stack == nil && k.st.bug != nil && !scratch {
			tr.Stack = k.st.bug.Stack
		}
	}
	return tr, nil
}

// keepRecords gives the transition tr, grown in the kernel's buffers,
// exact-size copies of its records (nil where it has none, as a
// transition that never had any), and takes the buffers back.
func (k *Kernel) keepRecords(tr *record.Transition) {
	k.bufAcc, tr.Accesses = tr.Accesses[:0], clip(tr.Accesses)
	k.bufSync, tr.Sync = tr.Sync[:0], clip(tr.Sync)
	k.bufOwn, tr.Own = tr.Own[:0], clip(tr.Own)
}

// clip copies s into a slice of its length, or nil when it is empty.
func clip[E any](s []E) []E {
	if len(s) == 0 {
		return nil
	}
	return append(make([]E, 0, len(s)), s...)
}

// loopLimit is the number of instructions a transition may run before the
// infinite-loop heuristic fires (thesis §3.4.6 (b)).
func (k *Kernel) loopLimit() uint64 {
	avg := uint64(ProgressMinAverage)
	if k.st.nTrans > 0 {
		if a := k.st.sumInstr / k.st.nTrans; a > avg {
			avg = a
		}
	}
	return ProgressTriggerFactor * avg
}

// run executes the current thread until a PP or the end.
func (k *Kernel) run(start uint64) (record.PP, error) {
	limit := k.loopLimit()
	probeAt := uint64(spinProbeAt)
	for {
		used := k.cpu.Instret - start
		// The heuristic is about threads waiting on each other; a lone
		// thread is bounded by the instruction budget instead (or by the
		// spin probe, which finds it looping for ever).
		if used >= limit && len(k.st.threads) > 1 {
			k.bugHere(record.BugLoop, fmt.Sprintf("infinite loop: thread %d ran %d instructions without reaching a preemption point (%d × the average transition, thesis §3.4.6)",
				k.curTID(), used, ProgressTriggerFactor), nil)
			return record.PP{Kind: record.PPEnd, PC: k.cpu.PC}, nil
		}
		if used >= probeAt && !k.cfg.ThesisHeuristics && k.txn == nil {
			// Look for a loop that came back to the same state (spin.go).
			if k.probe == nil {
				k.startProbe()
			}
			probeAt *= 2
		}
		spent := k.cpu.Instret + k.st.work
		if spent >= k.cfg.MaxInstructions {
			return record.PP{Kind: record.PPEnd, PC: k.cpu.PC}, ErrBudget
		}
		n := uint64(1 << 62)
		if used < limit {
			n = limit - used
		}
		if used < probeAt && probeAt-used < n {
			n = probeAt - used
		}
		if b := k.cfg.MaxInstructions - spent; b < n {
			n = b
		}
		stop := k.cpu.Run(n)
		switch stop.Reason {
		case cpu.StopLimit:
			continue
		case cpu.StopEcall:
			if pp, done := k.syscall(); done {
				return pp, nil
			}
		case cpu.StopBreakpoint:
			if p := k.probe; p != nil && p.temp && stop.PC == p.mark.pc {
				if pp, done := k.probeHit(); done {
					return pp, nil
				}
				continue
			}
			if pp, done := k.breakpoint(stop.PC); done {
				return pp, nil
			}
		case cpu.StopGate:
			return k.accessPP(stop.PC), nil
		default:
			k.trap(stop)
			return record.PP{Kind: record.PPEnd, PC: stop.PC}, nil
		}
	}
}

// breakpoint handles a breakpoint hit at pc: returns from sync functions,
// configured PPs and sync-function entries.
func (k *Kernel) breakpoint(pc uint64) (record.PP, bool) {
	t := k.cur()
	sp := k.cpu.X[2]
	for n := len(t.calls); n > 0 && t.calls[n-1].ret == pc && t.calls[n-1].sp == sp; n = len(t.calls) {
		f := t.calls[n-1]
		t.calls = t.calls[:n-1]
		k.syncEvent(record.SyncEvent{Kind: record.SyncReturn, Func: f.fn, Arg: f.arg})
	}
	if k.cfg.SVCOMP {
		if pp, done := k.svcompBreak(pc); done {
			return pp, true
		}
	}
	if fn, ok := k.thrFuncs[pc]; ok {
		if fn != record.ThrInit {
			return k.thrCall(pc, fn)
		}
		k.thrInit()
	}
	if name, ok := k.ppFuncs[pc]; ok && k.txn == nil && !k.inAtomic() && k.withinOK(pc) {
		t.atBreak = true
		k.ppStack = k.ppStackAt(pc)
		return record.PP{Kind: record.PPSyncFunc, PC: pc, Func: name}, true
	}
	if k.racePCs[pc] && k.txn == nil && !k.inAtomic() && !(k.scPCs[pc] && k.cpu.Reserved()) && k.withinOK(pc) {
		// Never between an LR and its SC: the switch there clears the
		// reservation, so the SC fails and its loop retries, and the
		// spin rule then sees the same state again with nothing
		// written and blocks a thread that was making progress (a
		// false deadlock on every library's indexer_thr, with a PP at
		// atomic_compare_swap's sc.w). The LR/SC pair is one atomic
		// step, as under --every-access; its PP is at the LR.
		t.atBreak = true
		k.ppStack = k.ppStackAt(pc)
		return record.PP{Kind: record.PPDataRace, PC: pc, Func: k.funcName(pc)}, true
	}
	k.enterFunc(pc)
	k.cpu.ResumeFromBreakpoint()
	return record.PP{}, false
}

// lrBefore finds the LR of the LR/SC sequence whose SC is at pc: the
// nearest LR at most 32 bytes before it, if pc is an SC.
func (k *Kernel) lrBefore(pc uint64) (uint64, bool) {
	isOp := func(a uint64, ops ...cpu.Op) bool {
		var b [4]byte
		if !k.syms.IsInstruction(a) || k.mem.ReadBytes(a, b[:]) != nil {
			return false
		}
		op := cpu.Decode(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24).Op
		return slices.Contains(ops, op)
	}
	if !isOp(pc, cpu.OpSCW, cpu.OpSCD) {
		return 0, false
	}
	for d := uint64(2); d <= 32 && d <= pc; d += 2 {
		if isOp(pc-d, cpu.OpLRW, cpu.OpLRD) {
			return pc - d, true
		}
	}
	return 0, false
}

// enterFunc records entry into a known sync function at pc (if it is one)
// and arms the breakpoint that sees it return.
func (k *Kernel) enterFunc(pc uint64) {
	fn, ok := k.eventFuncs[pc]
	if !ok {
		return
	}
	t := k.cur()
	ra, sp, a0 := k.cpu.X[1], k.cpu.X[2], k.cpu.X[10]
	if n := len(t.calls); n < 64 {
		// A new array each time: snapshots share the old one.
		t.calls = append(t.calls[:n:n], syncFrame{fn: fn, arg: a0, ret: ra, sp: sp})
	}
	k.cpu.SetBreakpoint(ra) // idempotent
	k.syncEvent(record.SyncEvent{Kind: record.SyncEnter, Func: fn, Arg: a0, PC: pc})
}

// withinOK applies the within/without directives to the current stack.
func (k *Kernel) withinOK(pc uint64) bool {
	if len(k.cfg.Filters) == 0 {
		return true
	}
	stack := k.stackAt(pc)
	funcs := make([]string, 0, len(stack))
	for i, fpc := range stack {
		if i > 0 {
			fpc -= 4 // a return address: name the call's function
		}
		if name, _, ok := k.syms.FuncAt(fpc); ok {
			funcs = append(funcs, name)
		}
	}
	return acceptPP(k.cfg.Filters, funcs)
}

// acceptPP is the thesis's check_withins (§3.4.1): with any "within"
// directive the filters are an allowlist, otherwise a denylist; each
// directive whose function is on the stack sets the answer, the last one
// winning.
func acceptPP(filters []Filter, stackFuncs []string) bool {
	accept := true
	for _, f := range filters {
		if f.Within {
			accept = false
			break
		}
	}
	for _, f := range filters {
		for _, name := range stackFuncs {
			if name == f.Func {
				accept = f.Within
				break
			}
		}
	}
	return accept
}

func (k *Kernel) funcName(pc uint64) string {
	name, _, _ := k.syms.FuncAt(pc)
	return name
}

// ppStackAt is the stack of the PP at pc that ends the transition
// (Transition.Stack): none in a scratch step (StepScratch), whose caller
// keeps only what the transition touched.
func (k *Kernel) ppStackAt(pc uint64) []uint64 {
	if k.tr != nil && k.tr == k.scratchTr {
		return nil
	}
	return k.stackAt(pc)
}

// stackAt unwinds the current thread with frame 0 at pc.
func (k *Kernel) stackAt(pc uint64) []uint64 {
	x := &k.cpu.X
	return k.threadBottom(k.syms.Unwind(pc, x[1], x[2], x[8], k.mem.Read64, 32))
}

// stack unwinds the current thread at the instruction being handled (the
// ecall for system calls).
func (k *Kernel) stack() []uint64 {
	if k.curLook() == nil {
		return nil
	}
	return k.stackAt(k.cpu.PC)
}

// threadStack unwinds a thread that is not on the CPU.
func (k *Kernel) threadStack(t *thread) []uint64 {
	pc, ra, sp, fp := k.unwindRegs(t)
	return k.threadBottom(k.syms.Unwind(pc, ra, sp, fp, k.mem.Read64, 32))
}

// unwindRegs are the registers thread t is unwound from: the CPU's for
// the running thread, else its saved ones, with the pc of the ecall it
// stopped after.
func (k *Kernel) unwindRegs(t *thread) (pc, ra, sp, fp uint64) {
	if k.isCur(t) {
		x := &k.cpu.X
		return k.cpu.PC, x[1], x[2], x[8]
	}
	pc = t.pc
	if _, modelled := k.thrFuncs[pc]; !t.atBreak && !modelled && pc >= 4 {
		pc -= 4 // it stopped after an ecall: show the ecall
	}
	return pc, t.regs[1], t.regs[2], t.regs[8]
}

func (k *Kernel) syncEvent(e record.SyncEvent) {
	// Any thread-library call but mutex_lock/unlock, and any create,
	// block or unblock, is progress for the yield heuristic (§3.4.6).
	switch e.Kind {
	case record.SyncCreate, record.SyncBlock, record.SyncUnblock:
		if t := k.cur(); t != nil {
			t.yields, t.atomics = 0, 0
		}
	case record.SyncEnter:
		if t := k.cur(); t != nil && e.Func != record.MutexLock && e.Func != record.MutexUnlock {
			t.yields, t.atomics = 0, 0
		}
	case record.SyncReturn:
		if e.Func == record.MutexUnlock && k.st.hblocked > 0 {
			k.wakeMutexWaiters(e.Arg)
		}
	}
	if k.tr != nil {
		if e.PC == 0 {
			e.PC = k.cpu.PC
		}
		k.tr.Sync = append(k.tr.Sync, e)
	}
}

// learnStack notes an access to another thread's stack: the granules it
// touches are shared, and the owner's own accesses to them matter too.
func (k *Kernel) learnStack(addr uint64, size uint8, write bool) {
	for i, u := range k.st.threads {
		if i != k.st.cur && addr >= u.stackLo && addr < u.stackHi {
			if write {
				// What decides its loop lives on that stack.
				u = k.own(i)
				u.spinDirty = true
				if u.spinning {
					k.unblock(u)
				}
			}
			k.learned[addr&^7] = true
			k.learned[(addr+uint64(size)-1)&^7] = true
			return
		}
	}
}

// LearnStack adds granules to what SharedStackSeen reports (a resumed
// exploration's, as of its last commit).
func (k *Kernel) LearnStack(gs []uint64) {
	for _, g := range gs {
		k.learned[g&^7] = true
	}
}

// frameAccess reports whether the instruction at pc addresses memory
// relative to sp or fp: the thread's own frame (prologue saves, spills,
// locals), as --data-race-func and preempt-everywhere leave out. A learned
// shared stack location is a wait node reached through a pointer; a later
// frame that happens to reuse its address is not shared.
func (k *Kernel) frameAccess(pc uint64) bool {
	w, ok := k.mem.Read32(pc)
	if !ok {
		return false
	}
	in := cpu.Decode(w)
	return in.Rs1 == 2 || in.Rs1 == 8
}

// SharedStackSeen returns the stack granules (sorted) that a thread other
// than their owner accessed in any execution of this machine, for the
// next state spaces' Config.SharedStack. It is not part of a checkpoint:
// it accumulates over the whole exploration.
func (k *Kernel) SharedStackSeen() []uint64 {
	out := make([]uint64, 0, len(k.learned))
	for g := range k.learned {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// kernelAccess records an atomic access a system call made on the
// guest's behalf (a mutex word, a deschedule's reject word): changed says
// whether a write changed memory.
func (k *Kernel) kernelAccess(addr uint64, size uint8, write, changed bool, pc uint64) {
	f := cpu.AccAtomic
	if write {
		f |= cpu.AccWrite
	}
	if changed {
		f |= cpu.AccChanged
	}
	k.Access(addr, size, f, pc)
}

// Fence implements cpu.Tracker: a C11 fence is a sync event of the
// transition (for the race analysis's happens-before).
func (k *Kernel) Fence(f cpu.AccessFlags, pc uint64) {
	if k.tr == nil {
		return
	}
	var arg uint64
	if f&cpu.AccAcquire != 0 {
		arg |= record.FenceAcquire
	}
	if f&cpu.AccRelease != 0 {
		arg |= record.FenceRelease
	}
	k.tr.Sync = append(k.tr.Sync, record.SyncEvent{Kind: record.SyncFence, Arg: arg, PC: pc})
}

// Access implements cpu.Tracker: it records shared accesses.
func (k *Kernel) Access(addr uint64, size uint8, f cpu.AccessFlags, pc uint64) {
	write, atomic := f&cpu.AccWrite != 0, f&cpu.AccAtomic != 0
	if k.capture != nil {
		if st, ok := k.capture[pc]; ok && st == nil {
			k.capture[pc] = k.stackAt(pc)
		}
	}
	if k.values != nil {
		if v, ok := k.values[pc]; ok && v == nil {
			// The CPU reports an access after it: memory holds what a load
			// read and what a store wrote.
			var b [8]byte
			if size <= 8 && k.mem.ReadBytes(addr, b[:size]) == nil {
				x := binary.LittleEndian.Uint64(b[:])
				k.values[pc] = &x
			}
		}
	}
	if write && k.preStep != nil && k.weakOwner() {
		k.noteWeakWrite(addr, size) // before the stack filter: a rollback restores the stack too
	}
	t := k.own(k.st.cur)
	if atomic && len(t.calls) == 0 {
		t.atomics++ // a spin on atomics in the program, not the library's locks
	}
	if addr >= t.stackLo && addr < t.stackHi {
		if k.private(t, addr, size, pc) {
			// A spin window compares the thread's stack as a whole; the
			// exploration still needs it where it is exposed.
			if t.exposedTo(addr, size) {
				k.ownAccess(record.Access{Addr: addr, Size: size, Write: write, Atomic: atomic, PC: pc, Sync: uint32(len(k.tr.Sync)),
					Acquire: f&cpu.AccAcquire != 0, Release: f&cpu.AccRelease != 0})
			}
			return
		}
	} else {
		k.learnStack(addr, size, write)
	}
	if write && size == 8 {
		if v, ok := k.mem.Read64(addr); ok {
			k.expose(v) // the CPU reports a store after it: memory holds the value
		}
	}
	changed := write && f&cpu.AccChanged != 0
	if changed {
		t.spinDirty = true
		if k.probe != nil {
			k.probe.dirty = true
		}
	}
	if k.probe != nil {
		k.probe.note(addr, size)
	}
	if write && k.st.hblocked > 0 && (changed || k.cfg.ThesisHeuristics) {
		// Under the spin-loop rule a write that changes nothing wakes no
		// one: the spinner would repeat its iteration exactly.
		k.wakeWaiters(addr, uint64(size))
	}
	a := record.Access{Addr: addr, Size: size, Write: write, Atomic: atomic, PC: pc, Sync: uint32(len(k.tr.Sync)),
		Acquire: f&cpu.AccAcquire != 0, Release: f&cpu.AccRelease != 0}
	if addr >= HeapBase && addr < k.st.heap.brk {
		if b := k.st.heap.blockAt(addr); b != nil {
			a.Block, a.Gen = b.id, b.gen
		}
	}
	// An access set, not a log: loops touch the same locations again and
	// again. Small sets are scanned; larger ones use an index.
	acc := k.tr.Accesses
	if len(acc) < 16 {
		for i := range acc {
			if acc[i] == a {
				return
			}
		}
	} else {
		if k.seenFor != k.tr {
			clear(k.seen)
			for _, x := range acc {
				k.seen[x] = struct{}{}
			}
			k.seenFor = k.tr
		}
		if _, dup := k.seen[a]; dup {
			return
		}
		k.seen[a] = struct{}{}
	}
	k.tr.Accesses = append(acc, a)
}

// memoryUsed is guest memory from new_pages and the heap arena.
func (k *Kernel) memoryUsed() uint64 {
	var n uint64
	for _, r := range k.st.regions {
		n += r.size
	}
	return n + (k.st.heap.brk - HeapBase)
}

// regionAt returns the new_pages region containing addr.
func (k *Kernel) regionAt(addr uint64) (region, bool) {
	i := sort.Search(len(k.st.regions), func(i int) bool { return k.st.regions[i].base+k.st.regions[i].size > addr })
	if i < len(k.st.regions) && k.st.regions[i].base <= addr {
		return k.st.regions[i], true
	}
	return region{}, false
}

// MaxOutput bounds the guest's total output; more is a limit bug.
const MaxOutput = 64 << 20

// workBytes is how many bytes a system call may copy per instruction of
// budget it is charged.
const workBytes = 64

// charge counts n bytes of kernel work against the budget.
func (k *Kernel) charge(n uint64) { k.st.work += n / workBytes }

func (k *Kernel) appendOutput(b []byte) {
	k.syncEvent(record.SyncEvent{Kind: record.SyncOutput, Arg: uint64(len(b))})
	size := len(b)
	if k.st.out != nil {
		size += k.st.out.size
	}
	if size > MaxOutput {
		k.limitBug(fmt.Sprintf("output limit: the program wrote more than %s (a fixed limit of the checker)", SizeText(MaxOutput)))
		return
	}
	k.st.out = &outNode{prev: k.st.out, data: b, size: size}
}
