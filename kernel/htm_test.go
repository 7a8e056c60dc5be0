package kernel

import (
	"slices"
	"testing"

	"landslide/record"
)

// TestSelfAbortKeepsReads: a transaction that aborts itself (weak_undo's
// thread 0 writes a, reads b, writes a again and calls _xabort(7)) leaves
// no write in its transition, but its read of b stays, between the
// transaction's begin and its abort: what it read decided that it
// aborted, so another thread's write of b is a dependency (htm2's
// transactions abort themselves on reading prevent_transactions).
func TestSelfAbortKeepsReads(t *testing.T) {
	img := fixtureImage(t, "htm/weak_undo")
	k := newKernel(t, img, Config{HTM: HTMConfig{AbortCodes: true}})
	addrA, _, okA := k.Symbols().Lookup("a")
	addrB, _, okB := k.Symbols().Lookup("b")
	if !okA || !okB {
		t.Fatal("weak_undo has no a or b")
	}
	var aborted *record.Transition
	for aborted == nil {
		if ended, bug := k.Ended(); ended {
			t.Fatalf("weak_undo ended (bug %v) before its transaction aborted", bug)
		}
		tr, err := k.Step(k.Default())
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(tr.Sync, func(e record.SyncEvent) bool { return e.Kind == record.SyncTxnAbort }) {
			aborted = tr
		}
	}
	begin := slices.IndexFunc(aborted.Sync, func(e record.SyncEvent) bool { return e.Kind == record.SyncTxnBegin })
	if begin < 0 || begin+1 >= len(aborted.Sync) || aborted.Sync[begin+1].Kind != record.SyncTxnAbort {
		t.Fatalf("sync events %v: want the transaction's begin followed by its abort", aborted.Sync)
	}
	if want := uint64(record.XabortExplicit | 7<<24); aborted.Sync[begin+1].Arg != want {
		t.Errorf("abort status %#x, want EXPLICIT with code 7 (%#x)", aborted.Sync[begin+1].Arg, want)
	}
	readB := false
	for _, a := range aborted.Accesses {
		switch {
		case a.Addr == addrA && a.Write:
			t.Errorf("the aborted body's write of a stayed: %+v", a)
		case a.Addr == addrB && !a.Write:
			readB = true
			if a.Sync != uint32(begin+1) {
				t.Errorf("the read of b follows %d sync events, want %d (inside the transaction)", a.Sync, begin+1)
			}
		}
	}
	if !readB {
		t.Errorf("the aborted body's read of b is gone: accesses %+v", aborted.Accesses)
	}
}
