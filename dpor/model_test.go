package dpor

import (
	"fmt"
	"strconv"
	"strings"

	"landslide/record"
)

// model is a tiny record.Machine for the tests: threads run lists of
// operations on shared variables and mutexes, one operation per
// transition (every operation is a PP), like the thesis's figures.
type model struct {
	prog [][]op
	st   modelState
	// clock, when set, advances by tick at every Step (estimator tests).
	clock *int64
	tick  int64
	// posixLocks models locks as the kernel's pthread mutexes: a thread
	// whose next operation locks a held mutex cannot run (no failed
	// attempt), and lock and unlock carry the mutex's sync events.
	posixLocks bool
}

type opKind uint8

const (
	opLoad     opKind = iota // reg = var
	opInc                    // reg++ (thread-local)
	opStore                  // var = reg
	opLock                   // acquire mutex; while held, a failed attempt that waits for an unlock
	opUnlock                 // release mutex
	opAssert                 // fail if var != arg
	opAdd                    // var += arg (one read-modify-write access)
	opNondet                 // reg = a value of [0, arg); a nonzero one is also stored to var
	opSet                    // var = arg
	opCopy                   // var = variable arg (a read of arg and a write of var)
	opCond                   // reg = var; if reg != 0, also var arg = 1 (what it touches depends on what ran before)
	opTxn                    // _xbegin: the choice's value 0 commits var += arg (reg = 0); an abort status runs nothing (reg = 1)
	opFallback               // if reg != 0: var += arg (one atomic read-modify-write), else nothing
	// opTxnIf: _xbegin, as opTxn with 1 to add, but the transaction first
	// reads variable arg and, if it is nonzero, aborts itself (_xabort):
	// reg = 1, and the transition keeps the read between its SyncTxnBegin
	// and SyncTxnAbort, as the kernel's does. htm2's transaction.
	opTxnIf
	opGuard // if reg != 0: var = arg, else nothing (htm2's failure path raising and lowering its flag)
	// opIfZero: reads variable arg and, if it is zero, also var++ (reg =
	// 0; else reg = 1): opTxnIf's footprint without a transaction (what
	// it touches depends on what it reads, in one transition).
	opIfZero
	// opExit: exit(): the program ends at once, the other threads'
	// remaining operations never run (no bug).
	opExit
)

type op struct {
	kind opKind
	v    int // variable or mutex
	arg  int64
}

type modelState struct {
	pc     []int
	reg    []int64
	vars   [4]int64
	held   [2]record.TID // mutex owner, 0 if free
	waits  []int         // per thread: 1+mutex it waits for after a failed attempt, 0 if none
	nv     []int64       // per thread: the value chosen for its next opNondet (as the kernel's nondet calls: by the choice that ran it there)
	cur    record.TID
	ended  bool
	exited bool // ended by an opExit
	bug    *record.Bug
	nsteps int
}

func newModel(prog ...[]op) *model {
	m := &model{prog: prog}
	m.st.pc = make([]int, len(prog))
	m.st.reg = make([]int64, len(prog))
	m.st.waits = make([]int, len(prog))
	m.st.nv = make([]int64, len(prog))
	return m
}

func (m *model) clone(s modelState) modelState {
	c := s
	c.pc = append([]int(nil), s.pc...)
	c.reg = append([]int64(nil), s.reg...)
	c.waits = append([]int(nil), s.waits...)
	c.nv = append([]int64(nil), s.nv...)
	return c
}

func (m *model) canRun(i int) bool {
	if m.st.pc[i] >= len(m.prog[i]) {
		return false
	}
	if o := m.prog[i][m.st.pc[i]]; m.posixLocks && o.kind == opLock && m.st.held[o.v] != 0 {
		return false
	}
	return m.st.waits[i] == 0
}

func (m *model) Runnable() []record.TID {
	if m.st.ended {
		return nil
	}
	var out []record.TID
	for i := range m.prog {
		if m.canRun(i) {
			out = append(out, record.TID(i+1))
		}
	}
	return out
}

func (m *model) Default() record.Choice {
	r := m.Runnable()
	for _, t := range r {
		if t == m.st.cur {
			return record.Choice{Thread: t}
		}
	}
	if len(r) == 0 {
		return record.Choice{}
	}
	return record.Choice{Thread: r[0]}
}

const varBase = 0x1000

func (m *model) Step(c record.Choice) (*record.Transition, error) {
	i := int(c.Thread) - 1
	if i < 0 || i >= len(m.prog) || !m.canRun(i) || m.st.ended {
		return nil, fmt.Errorf("thread %d not runnable", c.Thread)
	}
	if m.clock != nil {
		*m.clock += m.tick
	}
	o := m.prog[i][m.st.pc[i]]
	m.st.cur = c.Thread
	m.st.nsteps++
	m.st.pc[i]++
	if o.kind == opLock && m.st.held[o.v] != 0 {
		// Like the reference mutex: the exchange fails (it still writes
		// the lock word) and the thread waits until an unlock.
		m.st.pc[i]--
		m.st.waits[i] = 1 + o.v
	}
	tr := &record.Transition{Thread: c.Thread, PP: record.PP{Kind: record.PPDataRace}}
	addr := uint64(varBase + 8*o.v)
	switch o.kind {
	case opLoad:
		m.st.reg[i] = m.st.vars[o.v]
		tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8})
	case opInc:
		m.st.reg[i]++
	case opStore:
		m.st.vars[o.v] = m.st.reg[i]
		tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8, Write: true})
	case opNondet:
		m.st.reg[i] = m.st.nv[i]
		if m.st.reg[i] != 0 {
			m.st.vars[o.v] = m.st.reg[i]
			tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8, Write: true})
		}
	case opSet:
		m.st.vars[o.v] = o.arg
		tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8, Write: true})
	case opCopy:
		m.st.vars[o.v] = m.st.vars[o.arg]
		tr.Accesses = append(tr.Accesses, record.Access{Addr: uint64(varBase + 8*o.arg), Size: 8}, record.Access{Addr: addr, Size: 8, Write: true})
	case opCond:
		m.st.reg[i] = m.st.vars[o.v]
		tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8})
		if m.st.reg[i] != 0 {
			m.st.vars[o.arg] = 1
			tr.Accesses = append(tr.Accesses, record.Access{Addr: uint64(varBase + 8*o.arg), Size: 8, Write: true})
		}
	case opTxn:
		m.st.reg[i] = 0
		if c.Value != 0 {
			m.st.reg[i] = 1
			break
		}
		m.st.vars[o.v] += o.arg
		tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8}, record.Access{Addr: addr, Size: 8, Write: true})
	case opTxnIf:
		m.st.reg[i] = 1
		if c.Value != 0 {
			tr.Sync = append(tr.Sync, record.SyncEvent{Kind: record.SyncTxnAbort, Arg: uint64(c.Value)})
			break
		}
		tr.Sync = append(tr.Sync, record.SyncEvent{Kind: record.SyncTxnBegin})
		tr.Accesses = append(tr.Accesses, record.Access{Addr: uint64(varBase + 8*o.arg), Size: 8, Sync: 1})
		if m.st.vars[o.arg] != 0 {
			tr.Sync = append(tr.Sync, record.SyncEvent{Kind: record.SyncTxnAbort, Arg: record.XabortRetry})
			break
		}
		m.st.reg[i] = 0
		m.st.vars[o.v]++
		tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8, Sync: 1}, record.Access{Addr: addr, Size: 8, Write: true, Sync: 1})
		tr.Sync = append(tr.Sync, record.SyncEvent{Kind: record.SyncTxnEnd})
	case opIfZero:
		m.st.reg[i] = 1
		tr.Accesses = append(tr.Accesses, record.Access{Addr: uint64(varBase + 8*o.arg), Size: 8})
		if m.st.vars[o.arg] != 0 {
			break
		}
		m.st.reg[i] = 0
		m.st.vars[o.v]++
		tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8}, record.Access{Addr: addr, Size: 8, Write: true})
	case opGuard:
		if m.st.reg[i] != 0 {
			m.st.vars[o.v] = o.arg
			tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8, Write: true})
		}
	case opFallback:
		if m.st.reg[i] != 0 {
			m.st.vars[o.v] += o.arg
			tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8, Write: true, Atomic: true})
		}
	case opAdd:
		m.st.vars[o.v] += o.arg
		tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8, Write: true, Atomic: true})
	case opExit:
		m.st.ended, m.st.exited = true, true
		alive := 0
		for j := range m.prog {
			if j != i && m.st.pc[j] < len(m.prog[j]) {
				alive++
			}
		}
		tr.Sync = append(tr.Sync, record.SyncEvent{Kind: record.SyncKill, Arg: uint64(alive)})
	case opAssert:
		tr.Accesses = append(tr.Accesses, record.Access{Addr: addr, Size: 8})
		if m.st.vars[o.v] != o.arg {
			m.st.ended = true
			m.st.bug = &record.Bug{Kind: record.BugAssert, Message: fmt.Sprintf("thread %d op %d: v%d == %d failed", c.Thread, m.st.pc[i]-1, o.v, o.arg), Thread: c.Thread}
		}
	case opLock:
		if m.st.waits[i] == 0 {
			m.st.held[o.v] = c.Thread
		}
		tr.Accesses = append(tr.Accesses, record.Access{Addr: 0x2000 + 8*uint64(o.v), Size: 8, Write: true, Atomic: true})
		if m.posixLocks {
			tr.Sync = append(tr.Sync, record.SyncEvent{Kind: record.SyncEnter, Func: record.MutexLock, Arg: 0x2000 + 8*uint64(o.v)},
				record.SyncEvent{Kind: record.SyncReturn, Func: record.MutexLock, Arg: 0x2000 + 8*uint64(o.v)})
		}
	case opUnlock:
		m.st.held[o.v] = 0
		tr.Accesses = append(tr.Accesses, record.Access{Addr: 0x2000 + 8*uint64(o.v), Size: 8, Write: true})
		if m.posixLocks {
			tr.Sync = append(tr.Sync, record.SyncEvent{Kind: record.SyncEnter, Func: record.MutexUnlock, Arg: 0x2000 + 8*uint64(o.v)},
				record.SyncEvent{Kind: record.SyncReturn, Func: record.MutexUnlock, Arg: 0x2000 + 8*uint64(o.v)})
		}
		for k := range m.st.waits {
			if m.st.waits[k] == 1+o.v {
				m.st.waits[k] = 0
			}
		}
	}
	if !m.st.ended {
		done := true
		for j := range m.prog {
			if m.st.pc[j] < len(m.prog[j]) {
				done = false
			}
		}
		if done {
			m.st.ended = true
		} else if len(m.Runnable()) == 0 {
			m.st.ended = true
			m.st.bug = &record.Bug{Kind: record.BugDeadlock, Message: "deadlock"}
		}
	}
	if m.st.ended {
		tr.PP = record.PP{Kind: record.PPEnd}
	} else if n := m.Values(c.Thread); n > 0 {
		tr.PP = record.PP{Kind: record.PPNondet}
		if c.Value < 0 || c.Value >= n {
			return nil, fmt.Errorf("choice %d:%d: no such value", c.Thread, c.Value)
		}
		m.st.nv[i] = c.Value
		return tr, nil
	}
	if m.st.pc[i] < len(m.prog[i]) && (m.prog[i][m.st.pc[i]].kind == opTxn || m.prog[i][m.st.pc[i]].kind == opTxnIf) {
		tr.PP = record.PP{Kind: record.PPXbegin}
	}
	if c.Value != 0 && o.kind != opTxn && o.kind != opTxnIf {
		return nil, fmt.Errorf("choice %d:%d: the transition ends at no nondet call", c.Thread, c.Value)
	}
	return tr, nil
}

// AtXbegin implements record.XbeginWaiter: thread t's last transition
// ended at its _xbegin (Step's PPXbegin).
func (m *model) AtXbegin(t record.TID) bool {
	i := int(t) - 1
	pc := m.st.pc[i]
	return !m.st.ended && pc > 0 && pc < len(m.prog[i]) && (m.prog[i][pc].kind == opTxn || m.prog[i][pc].kind == opTxnIf)
}

// Values implements record.Valuer: a thread's next opNondet has arg values.
func (m *model) Values(t record.TID) int64 {
	i := int(t) - 1
	if i < 0 || i >= len(m.prog) || m.st.pc[i] >= len(m.prog[i]) || m.prog[i][m.st.pc[i]].kind != opNondet {
		return 0
	}
	return m.prog[i][m.st.pc[i]].arg
}

// LockWait implements record.LockWaiter (posixLocks).
func (m *model) LockWait(t record.TID) (uint64, bool) {
	i := int(t) - 1
	if !m.posixLocks || i < 0 || i >= len(m.prog) || m.st.pc[i] >= len(m.prog[i]) {
		return 0, false
	}
	if o := m.prog[i][m.st.pc[i]]; o.kind == opLock && m.st.held[o.v] != 0 && m.st.held[o.v] != t {
		return 0x2000 + 8*uint64(o.v), true
	}
	return 0, false
}

func (m *model) Ended() (bool, *record.Bug) { return m.st.ended, m.st.bug }
func (m *model) Snapshot() record.Snapshot  { s := m.clone(m.st); return &s }
func (m *model) Restore(s record.Snapshot)  { m.st = m.clone(*s.(*modelState)) }

// outcome is the final state of a complete execution (the variables), or
// the failure that cut it short (which assertion failed, or deadlock): a
// failure ends the execution wherever the other threads are, so what they
// did before it is not part of the outcome.
func (m *model) outcome() string {
	if m.st.bug != nil {
		return m.st.bug.Kind.String() + ": " + m.st.bug.Message
	}
	// As fmt.Sprint prints them ("[1 0 0 0]"), built with strconv: the
	// oracle tests compute this at every branch.
	b := intList(nil, m.st.vars[:])
	if m.st.exited {
		// How far each thread got when the program exited is part of
		// its final state.
		b = append(b, " exit at "...)
		b = intList(b, m.st.pc)
	}
	return string(b)
}

// intList appends xs as fmt prints a slice of integers.
func intList[T int | int64](b []byte, xs []T) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

func schedString(cs []record.Choice) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(c.Thread)))
		if c.Value != 0 {
			b.WriteByte(':')
			b.WriteString(strconv.FormatInt(int64(c.Value), 10))
		}
	}
	return b.String()
}
