package kernel

import (
	"math/rand/v2"
	"slices"
	"testing"

	"landslide/record"
)

// TestAddRange: addRange against a set of 8-byte granules. Up to
// maxExposed ranges the result covers exactly the union of what was
// added, sorted, disjoint and not touching; past it, one range spanning
// everything (a superset: more dependences, never fewer).
func TestAddRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		var rs []waitRange
		want := map[uint64]bool{}
		for n := 1 + r.IntN(12); n > 0; n-- {
			lo := uint64(r.IntN(64)) * 8
			x := waitRange{lo, lo + uint64(1+r.IntN(6))*8}
			before := slices.Clone(rs)
			rs = addRange(rs, x)
			if len(before) > 0 && &before[0] == &rs[0] {
				t.Fatal("addRange wrote its input in place: snapshots share it")
			}
			for g := x.lo; g < x.hi; g += 8 {
				want[g] = true
			}
		}
		for i, x := range rs {
			if x.lo >= x.hi || i > 0 && rs[i-1].hi >= x.lo {
				t.Fatalf("trial %d: %v is not sorted, disjoint and apart", trial, rs)
			}
		}
		got := map[uint64]bool{}
		for _, x := range rs {
			for g := x.lo; g < x.hi; g += 8 {
				got[g] = true
			}
		}
		for g := range want {
			if !got[g] {
				t.Fatalf("trial %d: granule %#x added but not covered by %v", trial, g, rs)
			}
		}
		if len(rs) > 1 && len(got) != len(want) {
			t.Fatalf("trial %d: %v covers %d granules, %d were added", trial, rs, len(got), len(want))
		}
		if len(rs) > maxExposed {
			t.Fatalf("trial %d: %d ranges, more than %d", trial, len(rs), maxExposed)
		}
	}
}

// TestExposureIsTheFrame: in posix/stack_share mode 1, main's call
// mode1() passes &x, a local, to pthread_create. What becomes exposed is
// mode1's frame, found by unwinding: a range that holds &x, of at most a
// few hundred bytes, well below the stack's top (main's frame and the
// arguments above it stay private), and the new thread's stack none.
func TestExposureIsTheFrame(t *testing.T) {
	k := newKernel(t, fixtureImage(t, "posix/stack_share"), Config{Args: []string{"stack_share", "1"}})
	for k.Runnable() != nil && len(k.st.threads) < 2 {
		if _, err := k.Step(record.Choice{Thread: k.Runnable()[0]}); err != nil {
			t.Fatal(err)
		}
	}
	if len(k.st.threads) < 2 {
		t.Fatal("main never created its thread")
	}
	m := k.st.threads[0]
	if len(m.exposed) != 1 {
		t.Fatalf("main's exposed ranges %v, want one (mode1's frame)", m.exposed)
	}
	e := m.exposed[0]
	x := k.st.threads[1].regs[11] // the new thread's argument, a1 of start (&x)
	if x < e.lo || x >= e.hi || e.hi-e.lo > 512 || e.hi >= m.stackHi-64 {
		t.Errorf("exposed %#x-%#x (stack %#x-%#x); want mode1's frame around &x = %#x", e.lo, e.hi, m.stackLo, m.stackHi, x)
	}
	if len(k.st.threads[1].exposed) != 0 {
		t.Errorf("the new thread's stack is exposed: %v", k.st.threads[1].exposed)
	}
}
