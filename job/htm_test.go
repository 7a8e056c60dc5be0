package job

import (
	"context"
	"maps"
	"strings"
	"testing"

	"landslide/dpor"
	"landslide/kernel"
	"landslide/race"
	"landslide/record"
	"landslide/report"
)

// htmModes are the transactional-memory modes of thesis §6.2.1: -X
// (RETRY aborts), -X -R (retry sets), -X -A (distinct abort codes),
// -X -A -S (STM).
var htmModes = []struct {
	name string
	spec dpor.Spec
}{
	{"retry", dpor.Spec{}},
	{"retry sets", dpor.Spec{RetrySets: true}},
	{"abort codes", dpor.Spec{AbortCodes: true}},
	{"stm", dpor.Spec{AbortCodes: true, STM: true}},
}

// htmRun explores an htm fixture with the data-race PPs of its
// iteration function (the failure-path races Quicksand would find).
func htmRun(t *testing.T, name string, spec dpor.Spec, args ...string) *Result {
	return htmRunPPs(t, name, spec, name != "htm/misuse", args...)
}

// htmRunPPs is htmRun with or without the data-race PPs (every access
// of the fixture's RacePPFuncs, or of its iteration function).
func htmRunPPs(t *testing.T, name string, spec dpor.Spec, racePPs bool, args ...string) *Result {
	t.Helper()
	f, img := image(t, name)
	var pcs []uint64
	if racePPs {
		funcs := f.RacePPFuncs
		if len(funcs) == 0 {
			funcs = []string{"iteration"}
		}
		var err error
		if pcs, err = kernel.MemoryPCs(img, funcs); err != nil {
			t.Fatal(err)
		}
	}
	if spec.MaxInterleavings == 0 {
		spec.MaxInterleavings = 20000
	}
	cfg := Config{Spec: Spec{Program: f.Path(), Kernel: kernel.Config{DataRacePCs: pcs, Args: append([]string{f.Path()}, args...)}, Spec: spec}, Image: img}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

// TestHTMVerdicts: the thesis's TM tests at (2,1), with their final
// checks, under every mode:
// htm1's failure-path assertion fails (but not in STM mode, which needs
// K×N ≥ 3 for a failure path to meet a transaction, thesis §6.2.6);
// htm2, counter, fig63 and swap verify; swapbug deadlocks.
func TestHTMVerdicts(t *testing.T) {
	for _, m := range htmModes {
		for _, c := range []struct {
			name string
			want record.BugKind // 0: verified
		}{
			{"htm/htm1", record.BugAssert},
			{"htm/htm2", 0},
			{"htm/counter", 0},
			{"htm/fig63", 0},
			{"htm/swap", 0},
			{"htm/swapbug", record.BugDeadlock},
		} {
			want := c.want
			if m.spec.STM && (c.name == "htm/htm1" || c.name == "htm/swapbug") {
				// STM mode's conflict aborts follow a conflicting access:
				// at (2,1) no failure path meets a transaction (htm1), and
				// no two threads both abort into the failure path's locks
				// (swapbug). The thesis: -S is unsound for HTM.
				want = 0
			}
			res := htmRun(t, c.name, m.spec, "2", "1", "check")
			switch {
			case want == 0 && !res.Verified:
				t.Errorf("%s (%s): not verified: bug %v after %d interleavings", c.name, m.name, res.Bug, res.Executed)
			case want != 0 && (res.Bug == nil || res.Bug.Kind != want):
				t.Errorf("%s (%s): bug %v after %d interleavings, want %s", c.name, m.name, res.Bug, res.Executed, want)
			}
		}
	}
}

// TestHTMDataStructures: the [DAS16] data structures at (2,1), every
// access of their insertion a data-race PP. The AVL tree's transaction
// ignores _retry (thesis Fig. 6.6) and commits inside a failure path's
// insertion, losing a key; avl_fixed, the hash maps (with and without
// resizing) and the mutex-abstracted variants verify in every mode.
func TestHTMDataStructures(t *testing.T) {
	res := htmRun(t, "htm/avl_insert", dpor.Spec{}, "2", "1")
	if res.Bug == nil || res.Bug.Kind != record.BugAssert || !strings.Contains(res.Bug.Message, "missing from the tree") {
		t.Errorf("avl_insert: bug %v after %d interleavings, want the lost key", res.Bug, res.Executed)
	}
	for _, name := range []string{"avl_fixed", "map_basic", "map_basicer"} {
		for _, m := range htmModes {
			if res := htmRun(t, "htm/"+name, m.spec, "2", "1"); !res.Verified {
				t.Errorf("%s (%s): not verified: bug %v after %d interleavings (complete %v)", name, m.name, res.Bug, res.Executed, res.Complete)
			}
		}
	}
	for _, name := range []string{"avl_mutex", "map_mutex", "map_basicer_mutex"} {
		if res := htmRun(t, "htm/"+name, dpor.Spec{}, "2", "2"); !res.Verified {
			t.Errorf("%s: not verified: bug %v after %d interleavings (complete %v)", name, res.Bug, res.Executed, res.Complete)
		}
	}
}

// TestHTMLocks: the transactional lock keeps mutual exclusion over each
// implementation, with RETRY aborts and in STM mode; lock_fast, in STM
// mode as the thesis ran it, falls into the slow path on [Sei13]'s
// spinlock, whose isfree() writes the lock word (thesis Fig. 6.7), and
// never on the fixed spinlock or the mutex, at (2,1) and at the thesis's
// (9,9).
func TestHTMLocks(t *testing.T) {
	stm := dpor.Spec{AbortCodes: true, STM: true}
	for _, impl := range []string{"spinlock", "spin_fixed", "mutex"} {
		for _, spec := range []dpor.Spec{{}, stm} {
			if res := htmRun(t, "htm/lock_"+impl, spec, "2", "1"); !res.Verified {
				t.Errorf("lock(%s) %+v: not verified: bug %v after %d interleavings", impl, spec, res.Bug, res.Executed)
			}
		}
		for _, size := range [][]string{{"2", "1"}, {"9", "9"}} {
			res := htmRunPPs(t, "htm/lock_fast_"+impl, stm, false, size...)
			if impl == "spinlock" {
				if res.Bug == nil || !strings.Contains(res.Bug.Message, "fell into the lock's slow path") {
					t.Errorf("lock_fast(spinlock)%v: bug %v after %d interleavings, want the slow path", size, res.Bug, res.Executed)
				}
				if !traceHasEvent(res.Trace, "transaction aborted (CONFLICT)") {
					t.Errorf("lock_fast(spinlock)%v: the trace shows no CONFLICT abort", size)
				}
			} else if !res.Verified {
				t.Errorf("lock_fast(%s)%v: not verified: bug %v after %d interleavings", impl, size, res.Bug, res.Executed)
			}
		}
	}
}

// TestHTMAgainstFullEnumeration: DPOR with abort injection reaches the
// verdict of full enumeration (every thread, and every abort of a thread
// at its _xbegin, at every PP), never exploring more (sync PPs only: full
// enumeration with the data-race PPs is too large).
func TestHTMAgainstFullEnumeration(t *testing.T) {
	modes := append(htmModes[:3:3], struct {
		name string
		spec dpor.Spec
	}{"weak atomicity", dpor.Spec{AbortCodes: true, STM: true, WeakAtomicity: true}})
	for _, name := range []string{"htm/counter", "htm/fig63", "htm/htm2"} {
		for _, m := range modes {
			full := m.spec
			full.Strategy, full.KeepGoing = "full", true
			all := m.spec
			all.KeepGoing = true
			f, d := htmRunPPs(t, name, full, false), htmRunPPs(t, name, all, false)
			if !f.Complete || !d.Complete {
				t.Fatalf("%s (%s): incomplete: full %v, dpor %v", name, m.name, f.Complete, d.Complete)
			}
			if (f.Bug == nil) != (d.Bug == nil) || d.Executed > f.Executed {
				t.Errorf("%s (%s): full enumeration: bug %v in %d interleavings; dpor: bug %v in %d", name, m.name, f.Bug, f.Executed, d.Bug, d.Executed)
			}
		}
	}
}

// TestHTMMisuseIsABug: a nested _xbegin, and _xend or _xabort outside a
// transaction, are bugs with a trace, not failures of the checker.
func TestHTMMisuseIsABug(t *testing.T) {
	for arg, msg := range map[string]string{
		"nested": "_xbegin inside a transaction",
		"xend":   "_xend outside a transaction",
		"xabort": "_xabort(0x7) outside a transaction",
	} {
		res := htmRun(t, "htm/misuse", dpor.Spec{}, arg)
		if res.Bug == nil || res.Bug.Kind != record.BugSyscall || !strings.Contains(res.Bug.Message, msg) {
			t.Errorf("misuse %s: bug %v, want %q", arg, res.Bug, msg)
			continue
		}
		if res.Trace == nil || len(res.Trace.Steps) == 0 {
			t.Errorf("misuse %s: no trace", arg)
		}
	}
}

// TestHTMTransactionsAreOneLock: the race analysis treats committed
// transactions as holding one global lock (thesis Thm 4), under both HB
// modes: counter's transactional x++ (counter.c:15) never races with another thread's,
// while it does race with the failure path's atomic add (one side not
// transactional).
func TestHTMTransactionsAreOneLock(t *testing.T) {
	f, img := image(t, "htm/counter")
	for _, mode := range []race.Mode{race.Limited, race.Pure} {
		cfg := Config{Spec: Spec{Program: f.Path(), HB: mode, Spec: dpor.Spec{KeepGoing: true}}, Image: img}
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		txnTxn, txnAtomic := 0, 0
		for _, r := range res.Races {
			inTxn := func(st []report.Frame) bool { return len(st) > 0 && st[0].Func == "iteration" && st[0].Line == 15 }
			a, b := inTxn(r.StackA), inTxn(r.StackB)
			switch {
			case a && b:
				txnTxn++
			case (a || b) && (r.A.Atomic || r.B.Atomic):
				txnAtomic++
			}
		}
		if txnTxn != 0 || txnAtomic == 0 {
			t.Errorf("%v: %d transaction/transaction and %d transaction/atomic candidates; want none and some", mode, txnTxn, txnAtomic)
		}
	}
}

// htmOutcomes explores fixture name with the given strategy and returns
// the set of outputs its interleavings print, and how many it explored.
func htmOutcomes(t *testing.T, name string, spec dpor.Spec, racePPs bool, args ...string) (map[string]bool, int) {
	t.Helper()
	f, img := image(t, name)
	cfg := kernel.Config{Args: append([]string{f.Path()}, args...), HTM: kernel.HTMConfig{AbortCodes: spec.AbortCodes}}
	if racePPs {
		pcs, err := kernel.SharedMemoryPCs(img, []string{"iteration"})
		if err != nil {
			t.Fatal(err)
		}
		cfg.DataRacePCs = pcs
	}
	k, err := kernel.New(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	spec.KeepGoing = true
	x, err := dpor.New(k, dpor.Options{Spec: spec, OnBranch: func(b *dpor.Branch) dpor.Stop {
		if b.Bug != nil {
			t.Errorf("%s %v: %v", name, args, b.Bug)
		}
		if !b.SleepBlocked && !b.SelfAbort { // not an execution of the program: no outcome
			out[string(k.Output())] = true
		}
		return dpor.Continue
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil || !res.Complete {
		t.Fatalf("%s %v: %v, complete %v", name, args, err, res != nil && res.Complete)
	}
	return out, res.Executed
}

// TestHTMOutcomes: the soundness oracle for abort injection and the
// reductions. observe prints the log of which thread committed or
// aborted in which order; DPOR, with and without retry sets and with
// distinct abort codes, and optimal DPOR, must reach exactly the logs
// full enumeration (every thread and every abort at every PP) reaches.
func TestHTMOutcomes(t *testing.T) {
	t.Parallel() // independent explorations: the suite's longest package uses both cores
	for _, c := range []struct {
		racePPs bool
		args    []string
		modes   []int // of htmModes
	}{
		{true, []string{"2", "1", "check"}, []int{0, 1, 2}},
		{false, []string{"2", "2", "check"}, []int{0, 1, 2}},
		{false, []string{"3", "1", "check"}, []int{0, 1}}, // three threads: where retry sets saturate
	} {
		type enumerated struct {
			outcomes map[string]bool
			n        int
		}
		truth := map[dpor.Spec]enumerated{} // full enumeration's, by its spec
		for _, i := range c.modes {
			m := htmModes[i]
			full := m.spec
			full.Strategy, full.RetrySets = "full", false // the same ground truth
			e, ok := truth[full]
			if !ok {
				// Retry sets are a reduction: with and without them, full
				// enumeration is the same run, enumerated once.
				e.outcomes, e.n = htmOutcomes(t, "htm/observe", full, c.racePPs, c.args...)
				truth[full] = e
			}
			want, nf := e.outcomes, e.n
			if len(want) < 2 {
				t.Fatalf("observe %v: %d outcomes: no test", c.args, len(want))
			}
			strategies := []string{"dpor", "optimal"}
			if m.spec.RetrySets || m.spec.AbortCodes {
				// Retry sets are a reduction of dpor only; optimal DPOR
				// does not inject CONFLICT aborts.
				strategies = strategies[:1]
			}
			for _, s := range strategies {
				spec := m.spec
				spec.Strategy = s
				got, nd := htmOutcomes(t, "htm/observe", spec, c.racePPs, c.args...)
				if !maps.Equal(got, want) {
					t.Errorf("observe %v (%s, %s, race PPs %v): %d outcomes in %d interleavings, full enumeration %d in %d",
						c.args, m.name, s, c.racePPs, len(got), nd, len(want), nf)
				}
			}
		}
	}
}

// traceHasEvent says whether some step of tr shows event.
func traceHasEvent(tr *report.Trace, event string) bool {
	if tr == nil {
		return false
	}
	for _, s := range tr.Steps {
		for _, e := range s.Events {
			if e == event {
				return true
			}
		}
	}
	return false
}

// TestHTMWeakAtomicity: under weak atomicity (-A -S -W) a transaction
// is atomic only with respect to other transactions, so the failure
// paths' plain accesses interleave with transaction bodies and every
// benchmark of the thesis that mixes the two breaks (thesis §6.2.4:
// "every benchmark is buggy under -W"), while lock_fast over the fixed
// spinlock, all of whose critical sections are transactions that never
// conflict, still verifies.
func TestHTMWeakAtomicity(t *testing.T) {
	weak := dpor.Spec{AbortCodes: true, STM: true, WeakAtomicity: true}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"htm/htm2", []string{"2", "1", "check"}},
		{"htm/counter", []string{"3", "1", "check"}},
		{"htm/swap", []string{"2", "1", "check"}},
		{"htm/avl_fixed", []string{"2", "1"}},
		{"htm/map_basicer", []string{"2", "1"}},
	} {
		res := htmRun(t, c.name, weak, c.args...)
		if res.Bug == nil || res.Bug.Kind != record.BugAssert {
			t.Errorf("%s %v under weak atomicity: bug %v after %d interleavings, want a failed assertion", c.name, c.args, res.Bug, res.Executed)
		}
		// The same program is correct under strong atomicity (STM mode).
		if strong := htmRun(t, c.name, dpor.Spec{AbortCodes: true, STM: true}, c.args...); !strong.Verified {
			t.Errorf("%s %v in STM mode: not verified: bug %v", c.name, c.args, strong.Bug)
		}
	}
	// An _xabort undoes the transaction's own writes, not another
	// thread's store that landed inside it (weak_undo.c).
	for _, n := range []string{"1", "3"} {
		if res := htmRun(t, "htm/weak_undo", weak, "2", n); !res.Verified || res.Executed < 3 {
			t.Errorf("weak_undo(2,%s): verified %v after %d interleavings (bug %v)", n, res.Verified, res.Executed, res.Bug)
		}
	}
	if res := htmRunPPs(t, "htm/lock_fast_spin_fixed", weak, false, "3", "1"); !res.Verified {
		t.Errorf("lock_fast(spin_fixed) under weak atomicity: bug %v after %d interleavings", res.Bug, res.Executed)
	}
	f, img := image(t, "htm/counter")
	if _, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), Spec: dpor.Spec{AbortCodes: true, WeakAtomicity: true}}, Image: img}); err == nil || !strings.Contains(err.Error(), "needs STM mode") {
		t.Errorf("weak atomicity without STM: err %v, want the -W needs -S error", err)
	}
}
