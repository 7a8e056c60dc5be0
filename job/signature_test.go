package job

import (
	"testing"

	"landslide/record"
	"landslide/store"
)

// fakeSyms names 0x1000-0x10ff panic, 0x1200-0x12ff abort, 0x2000-0x20ff
// main and 0x3000-0x30ff worker.
type fakeSyms struct{}

func (fakeSyms) FuncAt(pc uint64) (string, uint64, bool) {
	for _, f := range []struct {
		name  string
		start uint64
	}{{"panic", 0x1000}, {"abort", 0x1200}, {"main", 0x2000}, {"worker", 0x3000}} {
		if pc >= f.start && pc < f.start+0x100 {
			return f.name, f.start, true
		}
	}
	return "", 0, false
}

// TestSignatureFailingLocation: an assertion (a call of panic) is keyed
// by where it was called, not by panic's instruction, so two assertions
// of one function get two signatures (before, every assertion in main of
// any program shared one); abort's panic is seen through abort; a
// failure elsewhere keeps its own instruction.
func TestSignatureFailingLocation(t *testing.T) {
	sig := func(pc uint64, stack ...uint64) string {
		_, s := Signature(fakeSyms{}, &record.Bug{Kind: record.BugAssert, PC: pc, Stack: append([]uint64{pc}, stack...)})
		return s
	}
	a := sig(0x1010, 0x2014)
	b := sig(0x1010, 0x2024)
	if a == b {
		t.Error("two assertions in main share a signature")
	}
	if want := store.Signature(record.BugAssert, "main", 0x10, []string{"panic", "main"}); a != want {
		t.Errorf("assertion at main+0x10: %s, want %s (main+0x10)", a, want)
	}
	if got, want := sig(0x1010, 0x1208, 0x2034), store.Signature(record.BugAssert, "main", 0x30, []string{"panic", "abort", "main"}); got != want {
		t.Errorf("abort() at main+0x30: %s, want %s", got, want)
	}
	if got, want := sig(0x3008, 0x2044), store.Signature(record.BugAssert, "worker", 0x8, []string{"worker", "main"}); got != want {
		t.Errorf("a failure in worker: %s, want %s", got, want)
	}
	if sig(0x1010) == "" {
		t.Error("panic with no caller: no signature")
	}
}
