package kernel

import (
	"strings"
	"testing"

	"landslide/record"
)

// TestNondetChoice: a __VERIFIER_nondet call's value is chosen by the
// choice that runs the thread to the PP before the call (deposits: each
// thread's amount in [0, K-1]). Values says how many there are; the call
// returns lo+Value (its SyncNondet event says so), also from a state
// decoded from a checkpoint; a value beyond the domain, or on a
// transition that ends at no nondet call, is refused.
func TestNondetChoice(t *testing.T) {
	img := fixtureImage(t, "posix/deposits")
	k := newKernel(t, img, Config{Args: []string{"deposits", "3"}})
	var before record.Snapshot
	var tid record.TID
	var plain record.Choice // a choice whose transition ends elsewhere
	var plainSnap record.Snapshot
	for tid == 0 {
		s := k.Snapshot()
		ch := k.Default()
		tr, err := k.Step(ch)
		if err != nil {
			t.Fatal(err)
		}
		if tr.PP.Kind == record.PPNondet {
			before, tid = s, tr.Thread
		} else if plainSnap == nil && tr.PP.Kind != record.PPEnd {
			plain, plainSnap = ch, s
		}
		if done, bug := k.Ended(); done {
			t.Fatalf("ended (%v) before a nondet call", bug)
		}
	}
	if n := k.Values(tid); n != 3 {
		t.Fatalf("Values(%d) = %d, want 3", tid, n)
	}
	for v := int64(0); v < 3; v++ {
		k.Restore(before)
		if _, err := k.Step(record.Choice{Thread: tid, Value: v}); err != nil {
			t.Fatalf("value %d: %v", v, err)
		}
		// The checkpoint keeps the chosen value.
		c, err := k.EncodeCheckpoint(k.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		k2 := newKernel(t, img, Config{Args: []string{"deposits", "3"}})
		decoded, err := k2.DecodeCheckpoint(stored(c))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []*Kernel{k, k2} {
			if m == k2 {
				m.Restore(decoded)
			}
			tr, err := m.Step(record.Choice{Thread: tid})
			if err != nil {
				t.Fatal(err)
			}
			got := int64(-1)
			for _, e := range tr.Sync {
				if e.Kind == record.SyncNondet {
					got = int64(e.Arg)
				}
			}
			if got != v {
				t.Errorf("value %d: the call returned %d (decoded: %v)", v, got, m == k2)
			}
		}
	}
	k.Restore(before)
	if _, err := k.Step(record.Choice{Thread: tid, Value: 3}); err == nil || !strings.Contains(err.Error(), "nondet call of 3 values (a value is an index, 0 to 2)") {
		t.Errorf("value 3 of 3: %v", err)
	}
	k.Restore(plainSnap)
	plain.Value = 1
	if _, err := k.Step(plain); err == nil || !strings.Contains(err.Error(), "ends at no nondet call") {
		t.Errorf("a value on a transition that ends at no nondet call: %v", err)
	}
}
