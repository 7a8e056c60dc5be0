package kernel

import (
	"fmt"
	"testing"

	"landslide/record"
	"landslide/schedule"
)

// TestEveryAccessSeparatesC11LoadAndStore: with every shared access a PP,
// a C11 atomic load and the atomic store after it (lineup_counter's mode
// 1: counter = counter + 1 by atomic_load and atomic_store) are two
// events, so another thread can run between them. (They were once one
// event: the load was taken for the LR of an LR/SC pair.) An LR/SC pair
// stays one event (atomic_compare_swap's fixture).
func TestEveryAccessSeparatesC11LoadAndStore(t *testing.T) {
	img := fixtureImage(t, "posix/lineup_counter")
	o := play(t, img, Config{EveryAccess: true, Args: []string{"prog", "1"}}, schedule.Default{})
	events := 0
	for _, tr := range o.Transitions {
		shared := 0
		for _, a := range tr.Accesses {
			if a.Addr != LineupOrderAddr {
				shared++
			}
		}
		if shared > 1 {
			t.Errorf("transition of thread %d has %d shared accesses: %+v", tr.Thread, shared, tr.Accesses)
		}
		events += shared
	}
	if events < 8 { // two threads × two calls × (load, store), besides the rest
		t.Errorf("%d shared-access events, want at least 8", events)
	}
	cas := play(t, fixtureImage(t, "ref/atomic_compare_swap"), Config{EveryAccess: true}, schedule.Default{})
	pairs := 0
	for _, tr := range cas.Transitions {
		lr, sc := false, false
		for _, a := range tr.Accesses {
			if a.Atomic && !a.Write {
				lr = true
			}
			if a.Atomic && a.Write && lr {
				sc = true
			}
		}
		if sc {
			pairs++
		}
	}
	if pairs == 0 {
		t.Errorf("atomic_compare_swap: no transition holds an LR and its SC")
	}
}

// TestLineupSerial: with the calls one at a time, a call has no PP in it
// (it begins and returns in one transition, whichever thread runs), and
// every call writes the order location; outside that mode neither.
func TestLineupSerial(t *testing.T) {
	img := fixtureImage(t, "posix/lineup_counter")
	for _, serial := range []bool{false, true} {
		k, err := New(img, Config{LineupSerial: serial, Args: []string{"prog", "1"}})
		if err != nil {
			t.Fatal(err)
		}
		orderWrites, whole := 0, 0
		for {
			if done, bug := k.Ended(); done {
				if bug != nil {
					t.Fatalf("serial %v: %v", serial, bug)
				}
				break
			}
			// The last runnable thread: not the default, so that calls
			// would overlap if a call had PPs in it.
			run := k.Runnable()
			tr, err := k.Step(record.Choice{Thread: run[len(run)-1]})
			if err != nil {
				t.Fatal(err)
			}
			calls, returns := 0, 0
			for _, e := range tr.Sync {
				switch e.Kind {
				case record.SyncOpCall:
					calls++
				case record.SyncOpReturn:
					returns++
				}
			}
			if serial && calls != returns {
				t.Fatalf("serial: a transition of thread %d with %d call(s) and %d return(s)", tr.Thread, calls, returns)
			}
			whole += min(calls, returns)
			for _, a := range tr.Accesses {
				if a.Addr == LineupOrderAddr && a.Write {
					orderWrites++
				}
			}
		}
		if want := map[bool]int{false: 0, true: 4}[serial]; orderWrites != want || serial && whole != want {
			t.Errorf("serial %v: %d writes of the order location, %d calls whole in a transition; want %d", serial, orderWrites, whole, want)
		}
	}
}

// TestCheckpointInsideLineupCall: with every access a PP, snapshots taken
// while threads are inside their calls of a linearizability test round
// trip through the checkpoint encoding (the calls made, the threads that
// made them, each thread's open call) and continue as the original.
func TestCheckpointInsideLineupCall(t *testing.T) {
	img := fixtureImage(t, "lockfree/treiber_aba")
	cfg := Config{EveryAccess: true}
	ref, k, snaps := snapshots(t, img, cfg, schedule.NewRandom(3))
	inside := 0
	for i := range snaps {
		open := false
		for _, th := range snaps[i].st.threads {
			open = open || th.lineup.open
		}
		if !open || i%3 != 0 {
			continue
		}
		inside++
		trs := checkRoundTrip(t, fmt.Sprintf("depth %d", i), img, cfg, k, snaps[i], ref.Schedule[i:])
		if record.Hash(trs) != record.Hash(ref.Transitions[i:]) {
			t.Fatalf("depth %d: the in-memory snapshot no longer replays the reference", i)
		}
	}
	if inside < 5 {
		t.Fatalf("%d snapshots inside a call: the test exercises nothing", inside)
	}
}
