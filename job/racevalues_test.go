package job

import (
	"context"
	"slices"
	"testing"

	"landslide/dpor"
)

// TestRaceValues: a bug trace shows the value each racing access read or
// wrote. fig1's thread1 does `tmp = count; count = tmp + 1` (an lw at
// fig1.c:34, an sw at :35) and thread2 atomic_fetch_add(&count, 1) twice
// (an amoadd) before asserting count >= 2. With data-race PPs at those
// instructions and the assertion's load, the bug is found, and the program's own semantics
// check the values the trace shows: thread1's store is its load plus one,
// each amoadd stores one more than count held before it (so thread2's
// second stores one more than its first, unless thread1's store came in
// between), and the assertion failed, so its load read less than 2.
func TestRaceValues(t *testing.T) {
	_, img := image(t, "ref/fig1")
	rw := sharedPCs(t, img, "thread1")
	amo := sharedPCs(t, img, "atomic_fetch_add")
	if len(rw) != 2 || len(amo) != 1 {
		t.Fatalf("thread1's shared accesses %x, atomic_fetch_add's %x: want a load and a store, and one amoadd", rw, amo)
	}
	load, store, add := rw[0], rw[1], amo[0]
	cfg := Config{Spec: Spec{Spec: dpor.Spec{MaxInterleavings: 5000}}, Image: img}
	cfg.Kernel.SyncPPs = []string{"mutex_lock", "mutex_unlock"}
	check := sharedPCs(t, img, "thread2") // the assertion's load of count
	cfg.Kernel.DataRacePCs = append([]uint64{load, store, add}, check...)
	cfg.Kernel.Filters = thesisFilters // without thr_create, thr_exit, thr_join: as fig1.c asks
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trace == nil || res.Trace.Bug == nil || res.Trace.Bug.Kind != "assert" {
		t.Fatalf("no assertion failure in %d interleavings", res.Interleavings)
	}
	// The values of this trace's accesses, in the order of its steps:
	// each data-race step's own access (its thread's next transition).
	type seen struct {
		thread int32
		pc     uint64
		v      uint64
	}
	var order []seen
	shown := 0
	for _, s := range res.Trace.Steps {
		if s.Race == nil {
			continue
		}
		if s.Race.Value == nil {
			continue // the thread did not run again in this trace
		}
		shown++
		order = append(order, seen{s.Thread, s.Race.Access.PC, *s.Race.Value})
		if s.Race.OtherThread != 0 && s.Race.OtherValue == nil {
			t.Errorf("step %d: %q names thread %d's access but not its value", s.Index, s.Race.Text, s.Race.OtherThread)
		}
	}
	if shown == 0 {
		t.Fatalf("no race step of the trace shows a value:\n%+v", res.Trace.Steps)
	}
	var loaded = map[int32]uint64{}
	var adds []uint64
	minStore := ^uint64(0)
	for _, a := range order {
		switch a.pc {
		case load:
			loaded[a.thread] = a.v
		case store:
			if l, ok := loaded[a.thread]; ok && a.v != l+1 {
				t.Errorf("thread %d loaded %d and stored %d: want load+1", a.thread, l, a.v)
			}
			minStore = min(minStore, a.v)
		case add:
			adds = append(adds, a.v)
			minStore = min(minStore, a.v)
			if a.v < 1 {
				t.Errorf("an amoadd of 1 stored %d", a.v)
			}
		}
	}
	if len(adds) == 2 && adds[1] != adds[0]+1 && minStore >= adds[1] {
		t.Errorf("thread2's amoadds stored %d then %d with no other store shown between: %v", adds[0], adds[1], order)
	}
	if last := order[len(order)-1]; !slices.Contains(check, last.pc) || last.v >= 2 {
		t.Errorf("the last racing access shown is %+v: want the assertion's load of count, below 2 (count >= 2 failed)", last)
	}
	t.Logf("%d race steps with values: %v", shown, order)
}
