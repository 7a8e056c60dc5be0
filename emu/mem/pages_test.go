package mem

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWalk: Walk lists exactly the mapped pages, ascending, with their
// permissions and contents, nil for pages never written, and sees the
// snapshot, not later changes.
func TestWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	type page struct {
		perm    Perm
		written bool
		data    [PageSize]byte
	}
	want := map[uint64]*page{}
	m := New()
	// Pages spread over the whole space: both ends, leaf and node edges.
	addrs := []uint64{0, PageSize, 63 * PageSize, 64 * PageSize, Limit - PageSize, Limit - 2*PageSize, 1 << 30, 1<<36 + 5*PageSize}
	for range 300 {
		addrs = append(addrs, r.Uint64N(Limit)&^PageMask)
	}
	for _, a := range addrs {
		if want[a] != nil {
			continue
		}
		perm := Perm(r.IntN(16))
		if err := m.Map(a, PageSize, perm); err != nil {
			t.Fatal(err)
		}
		p := &page{perm: perm}
		if r.IntN(2) == 0 {
			off := r.Uint64N(PageSize)
			v := byte(r.IntN(255) + 1)
			m.WriteBytes(a+off, []byte{v})
			p.written, p.data[off] = true, v
		}
		want[a] = p
	}
	for _, a := range addrs[:20] { // unmapped again: not listed
		m.Unmap(a, PageSize)
		delete(want, a)
	}
	s := m.Snapshot()
	// Changes after the snapshot are not seen.
	m.Map(PageSize*1000, PageSize, PermR)
	m.WriteBytes(addrs[25], []byte{1, 2, 3})

	var got []uint64
	s.Walk(func(addr uint64, perm Perm, data *[PageSize]byte) {
		got = append(got, addr)
		w := want[addr]
		switch {
		case w == nil:
			t.Fatalf("0x%x listed but not mapped", addr)
		case perm != w.perm:
			t.Fatalf("0x%x: perm %v, want %v", addr, perm, w.perm)
		case (data != nil) != w.written:
			t.Fatalf("0x%x: data present %v, written %v", addr, data != nil, w.written)
		case data != nil && *data != w.data:
			t.Fatalf("0x%x: contents differ", addr)
		}
	})
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatal("pages not listed in strictly ascending order")
	}
	if len(got) != len(want) || len(got) != s.Pages() {
		t.Fatalf("listed %d pages, want %d (Pages() %d)", len(got), len(want), s.Pages())
	}
}
