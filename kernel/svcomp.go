package kernel

import (
	"strings"

	"landslide/record"
)

// SV-COMP's conventions (Config.SVCOMP), for the tasks of its
// ConcurrencySafety category, whose property is unreach-call: "the
// function reach_error (or __VERIFIER_error) is never called".
//
//   - The violation is the call: entering reach_error or __VERIFIER_error
//     ends the execution with a record.BugReachError, whatever the
//     function's body (a task often defines it empty, and aborts after).
//   - abort(), a failed assert of glibc's (__assert_fail and its kin,
//     which abort), a failed __VERIFIER_assume, and a deadlock end the
//     execution without a bug: the path does not exist, or cannot go on,
//     and reaches no error. An abort or a failed assume ends the whole
//     program at once, as exit() does (killOthers: dependent with every
//     other thread's step, so that the exploration still runs the others
//     before it), with a PP before it as before an exit (svcompEnds),
//     save inside an atomic section, whose step it ends: nothing the
//     section wrote is seen. A deadlock is an end state: no thread can move, so no
//     error is reachable from it.
//   - __VERIFIER_atomic_begin() ... __VERIFIER_atomic_end(), and the body
//     of every function whose name starts with __VERIFIER_atomic_, run
//     atomically: while a thread is inside one (thread.atomic > 0), its
//     shared accesses and configured PPs are no PPs, so the section runs
//     within one transition, which the exploration orders against the
//     other threads' as a whole. begin/end also take the SDK's global
//     mutex (verifier.c), so two sections never overlap. The PPs a thread
//     cannot skip inside a section are those before a pthread call or a
//     __VERIFIER_nondet call (the value's choice is made there) and a
//     yield: another thread that runs there runs inside the section,
//     which SV-COMP's semantics excludes. The machine explores it (more
//     executions than SV-COMP's: a "true" stays sound) and marks the
//     execution (state.atomicBroken); a violation found on it carries
//     AtomicBrokenDetail, and is no verdict of "false".
//
// Everything else (a segmentation fault, a heap error, a loop or a limit)
// stays what it is: the layers above make it "unknown" in SV-COMP terms.

// AtomicBrokenDetail is the title of the detail a BugReachError carries
// when its execution ran a thread inside another's atomic section.
const AtomicBrokenDetail = "atomic section interleaved"

// svcompAborts are the functions that abort the program: in SV-COMP mode
// a panic raised from one ends the execution without a bug.
var svcompAborts = map[string]bool{"abort": true, "__assert_fail": true, "__assert_perror_fail": true, "__assert": true}

// atomicFrame is a pending return of __VERIFIER_atomic_begin (begin: the
// section starts when it returns, having taken the mutex) or of an
// atomic function (the section ends when it returns).
type atomicFrame struct {
	ret, sp uint64
	begin   bool
}

// svcompSetup arms the breakpoints of SV-COMP mode.
func (k *Kernel) svcompSetup() {
	k.svErrors = map[uint64]string{}
	k.svAtomic = map[uint64]bool{}
	for _, f := range k.syms.Functions() {
		switch {
		case f.Name == "reach_error" || f.Name == "__VERIFIER_error":
			k.svErrors[f.Start] = f.Name
		case f.Name == "__VERIFIER_atomic_begin":
			k.svBegin = f.Start
		case f.Name == "__VERIFIER_atomic_end":
			k.svEnd = f.Start
		case strings.HasPrefix(f.Name, "__VERIFIER_atomic_"):
			k.svAtomic[f.Start] = true
		default:
			continue
		}
		k.cpu.SetBreakpoint(f.Start)
	}
}

// svcompBreak handles a breakpoint at pc in SV-COMP mode: the returns of
// atomic frames, the entries of the atomic functions, and of the error
// functions (done: the execution ended there).
func (k *Kernel) svcompBreak(pc uint64) (record.PP, bool) {
	sp := k.cpu.X[2]
	if t := k.curLook(); t != nil {
		for n := len(t.atomicFrames); n > 0 && t.atomicFrames[n-1].ret == pc && t.atomicFrames[n-1].sp == sp; n = len(t.atomicFrames) {
			t = k.cur()
			f := t.atomicFrames[n-1]
			t.atomicFrames = t.atomicFrames[: n-1 : n-1] // replaced, never written in place: snapshots share it
			if f.begin {
				t.atomic++
			} else if t.atomic > 0 {
				t.atomic--
			}
		}
	}
	if name, ok := k.svErrors[pc]; ok {
		var details []record.Detail
		if k.st.atomicBroken {
			details = []record.Detail{{Title: AtomicBrokenDetail, Text: "another thread ran while a thread was inside an atomic section (at a pthread call, a __VERIFIER_nondet call or a yield inside it), which SV-COMP's semantics does not allow: this trace may not exist there"}}
		}
		k.bugHere(record.BugReachError, name+"() reached", details)
		return record.PP{Kind: record.PPEnd, PC: pc}, true
	}
	switch {
	case pc == k.svEnd:
		if t := k.cur(); t.atomic > 0 {
			t.atomic--
		}
	case pc == k.svBegin || k.svAtomic[pc]:
		t := k.cur()
		if n := len(t.atomicFrames); n < maxSyncFrames {
			t.atomicFrames = append(t.atomicFrames[:n:n], atomicFrame{ret: k.cpu.X[1], sp: sp, begin: pc == k.svBegin})
			k.cpu.SetBreakpoint(k.cpu.X[1])
		}
		if pc != k.svBegin {
			t.atomic++
		}
	}
	return record.PP{}, false
}

// inAtomic reports whether the thread on the CPU is inside an SV-COMP
// atomic section: its accesses and configured PPs are no PPs.
func (k *Kernel) inAtomic() bool {
	t := k.curLook()
	return t != nil && t.atomic > 0
}

// noteAtomicBroken marks the execution when the thread about to run is
// not the one inside an atomic section.
func (k *Kernel) noteAtomicBroken(tid record.TID) {
	if !k.cfg.SVCOMP || k.st.atomicBroken {
		return
	}
	for _, u := range k.st.threads {
		if u.tid != tid && u.atomic > 0 {
			k.st.atomicBroken = true
			return
		}
	}
}

// svcompAbort reports whether a panic being raised comes from one of
// svcompAborts, in SV-COMP mode: the caller then ends the execution
// without a bug (svcompEnd).
func (k *Kernel) svcompAbort() bool {
	if !k.cfg.SVCOMP {
		return false
	}
	for i, pc := range k.stackAt(k.cpu.PC - 4) {
		if i > 0 {
			pc -= 4
		}
		if name, _, ok := k.syms.FuncAt(pc); ok && svcompAborts[name] {
			return true
		}
	}
	return false
}

// svcompEnds reports whether system call num, about to run, ends the
// program in SV-COMP mode (a failed assume, or a panic from one of
// svcompAborts) outside an atomic section: it then gets a PP before it,
// as an exit does, so that the other threads may run between the
// thread's last access and its end (a state from which they can reach
// an error). Inside a section the end is part of the section's step.
func (k *Kernel) svcompEnds(num uint64) bool {
	return k.cfg.SVCOMP && !k.inAtomic() && (num == SysAssumeFalse || num == SysPanic && k.svcompAbort())
}

// svcompEnd ends the program without a bug, as exit(0) does: a path that
// does not exist (a failed assume) or that the program aborted.
func (k *Kernel) svcompEnd() (uint64, control) {
	k.killOthers()
	k.st.status = 0
	k.st.ended = true
	return 0, ctlEnd
}
