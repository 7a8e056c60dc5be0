package job

import (
	"context"
	"testing"

	"landslide/dpor"
	"landslide/emu/elfsym"
	"landslide/kernel"
)

// TestSharedStackLearned: in cond_sleep_flag's broadcast_test the
// signaller reads and writes the wait node on the waiter's stack. One state
// space learns that location (Result.SharedStack) but, leaving the owner's
// own stack accesses out, sees no race on it; a state space given the
// location records the waiter's accesses too, and the race between the
// waiter's check-then-store and the signaller appears in
// sleep_until_signaled, where Quicksand then places its data-race PP.
func TestSharedStackLearned(t *testing.T) {
	f, data := image(t, "cond_sleep_flag/broadcast_test")
	img, err := elfsym.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	start, size, ok := img.Symbols.Lookup("sleep_until_signaled")
	if !ok {
		t.Fatal("no sleep_until_signaled")
	}
	inHelper := func(rs []*RaceReport) int {
		n := 0
		for _, r := range rs {
			for _, pc := range []uint64{r.A.PC, r.B.PC} {
				if pc >= start && pc < start+size {
					n++
				}
			}
		}
		return n
	}
	first, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), Spec: dpor.Spec{MaxInterleavings: 10000}}, Image: data})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Verified || len(first.SharedStack) == 0 || inHelper(first.Races) != 0 {
		t.Fatalf("first state space: verified %v, %d shared stack locations, %d race sides in the helper",
			first.Verified, len(first.SharedStack), inHelper(first.Races))
	}
	second, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), Spec: dpor.Spec{MaxInterleavings: 10000}, Kernel: kernel.Config{SharedStack: first.SharedStack}}, Image: data})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Verified || inHelper(second.Races) == 0 {
		t.Fatalf("with the shared stack locations: verified %v, races %v", second.Verified, second.Races)
	}
	t.Logf("%d shared stack granules; %d candidates before, %d after", len(first.SharedStack), len(first.Races), len(second.Races))
}
