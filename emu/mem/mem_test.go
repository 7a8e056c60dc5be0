package mem

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// model is an independent byte-map implementation of the same semantics.
type model map[uint64]byte

func (mo model) clone() model {
	c := make(model, len(mo))
	for k, v := range mo {
		c[k] = v
	}
	return c
}

// anyIn reports whether a byte of [a, a+n) was written.
func (mo model) anyIn(a, n uint64) bool {
	for i := a; i < a+n; i++ {
		if mo[i] != 0 {
			return true
		}
	}
	return false
}

// TestSnapshotAgainstModel interleaves random writes, zeroed ranges (Zero),
// snapshots and restores
// and checks every byte against a plain map that copies on snapshot. The
// range spans several leaves, so that Restore recycles pages, leaves and
// inner nodes (M4) and later writes reuse them: a recycled object still
// reachable from a snapshot would show as a wrong byte after a restore.
func TestSnapshotAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := New()
	const base, size = 0x100000 - 3*PageSize, 200 * PageSize
	reused := 0
	if err := m.Map(base, size, PermR|PermW); err != nil {
		t.Fatal(err)
	}
	cur := model{}
	type pair struct {
		s  *Snapshot
		mo model
	}
	var snaps []pair
	for step := 0; step < 20000; step++ {
		op := r.IntN(100)
		switch {
		case op < 4:
			// Zero a range of up to three pages, whole pages among them.
			a := base + r.Uint64N(size-3*PageSize)
			n := r.Uint64N(3 * PageSize)
			if r.IntN(2) == 0 {
				a, n = a&^PageMask, PageSize*(1+r.Uint64N(2))
			}
			gen := m.Gen
			if err := m.Zero(a, n); err != nil {
				t.Fatal(err)
			}
			whole := false
			for i := a; i < a+n; i++ {
				if i&PageMask == 0 && i+PageSize <= a+n && cur.anyIn(i, PageSize) {
					whole = true
				}
			}
			for i := a; i < a+n; i++ {
				delete(cur, i)
			}
			if whole && m.Gen == gen {
				t.Fatalf("step %d: Zero(0x%x, %d) dropped a written page and left Gen as it was", step, a, n)
			}
		case op < 85:
			a := base + r.Uint64N(size-8)
			b := []byte{byte(r.Uint32()), byte(r.Uint32())}
			if err := m.WriteBytes(a, b); err != nil {
				t.Fatal(err)
			}
			cur[a], cur[a+1] = b[0], b[1]
		case op < 93:
			snaps = append(snaps, pair{m.Snapshot(), cur.clone()})
		default:
			if len(snaps) == 0 {
				continue
			}
			p := snaps[r.IntN(len(snaps))]
			m.Restore(p.s)
			cur = p.mo.clone()
			reused += len(m.free.pages)
			// A sample right after the restore, before writes hide it.
			for range 256 {
				a := base + r.Uint64N(size)
				var b [1]byte
				if err := m.ReadBytes(a, b[:]); err != nil || b[0] != cur[a] {
					t.Fatalf("step %d, after a restore: byte 0x%x = %d, want %d (%v)", step, a, b[0], cur[a], err)
				}
			}
		}
		if step%1000 == 0 {
			buf := make([]byte, size)
			if err := m.ReadBytes(base, buf); err != nil {
				t.Fatal(err)
			}
			for i, got := range buf {
				if want := cur[base+uint64(i)]; got != want {
					t.Fatalf("step %d: byte 0x%x = %d, want %d", step, base+uint64(i), got, want)
				}
			}
		}
	}
	if reused == 0 {
		t.Error("no restore left a page to recycle: the test does not cover M4")
	}
}

func TestMapErrors(t *testing.T) {
	m := New()
	if err := m.Map(0x1001, 10, PermR); err == nil {
		t.Error("unaligned map accepted")
	}
	if err := m.Map(Limit-PageSize, 2*PageSize, PermR); err == nil {
		t.Error("map beyond the limit accepted")
	}
	if err := m.Map(0x10000, PageSize, PermR); err != nil {
		t.Fatal(err)
	}
	if err := m.Map(0x10000, PageSize, PermR); err == nil {
		t.Error("double map accepted")
	}
	if err := m.WriteBytes(0x10ffe, []byte{1, 2, 3}); err == nil {
		t.Error("write across into an unmapped page accepted")
	}
	var b [2]byte
	if err := m.ReadBytes(0x10ffe, b[:]); err != nil || b != [2]byte{} {
		t.Errorf("partial write changed memory: %v %v", b, err)
	}
	if err := m.WriteBytes(0x10ffe, []byte{7, 7}); err != nil {
		t.Fatal(err)
	}
	if err := m.Zero(0x10ffe, 3); err == nil {
		t.Error("zeroing across into an unmapped page accepted")
	}
	if err := m.Zero(Limit-1, 2); err == nil {
		t.Error("zeroing past the limit accepted")
	}
	if err := m.ReadBytes(0x10ffe, b[:]); err != nil || b != [2]byte{7, 7} {
		t.Errorf("a failed Zero changed memory: %v %v", b, err)
	}
	if err := m.Unmap(0x10000, PageSize); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.PermAt(0x10000); ok || m.MappedPages() != 0 {
		t.Error("unmap left the page")
	}
}

func TestRestoreIsolation(t *testing.T) {
	m := New()
	m.Map(0x20000, PageSize, PermR|PermW)
	m.WriteBytes(0x20000, []byte("before"))
	s := m.Snapshot()
	m.WriteBytes(0x20000, []byte("after!"))
	m.Restore(s)
	got := make([]byte, 6)
	m.ReadBytes(0x20000, got)
	if !bytes.Equal(got, []byte("before")) {
		t.Fatalf("restore gave %q", got)
	}
	// Writing after restore must not alter the snapshot.
	m.WriteBytes(0x20000, []byte("again!"))
	m.Restore(s)
	m.ReadBytes(0x20000, got)
	if !bytes.Equal(got, []byte("before")) {
		t.Fatalf("snapshot was modified: %q", got)
	}
}

func BenchmarkSnapshotRestore(b *testing.B) {
	m := New()
	m.Map(0x100000, 256*PageSize, PermR|PermW)
	for a := uint64(0x100000); a < 0x100000+256*PageSize; a += PageSize {
		m.Write64(a, a)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := m.Snapshot()
		m.Write64(0x100000+uint64(i%256)*PageSize, 1) // one dirty page
		m.Restore(s)
	}
}

// TestReleaseAsASearchDoes runs a search's pattern of snapshots over one
// memory, against a plain byte array per state: writes, a snapshot per
// node, transient snapshots of the deepest state restored later (a
// re-run's end, a probe's), and backtracks that restore a node and then
// Release every node below it. With PoisonReleased, a page or node a
// later state still reached after its release would read as 0xA5 or
// lose its pages: every state's bytes are compared after every
// backtrack, and the recycled objects are counted.
func TestReleaseAsASearchDoes(t *testing.T) {
	defer func(p bool) { PoisonReleased = p }(PoisonReleased)
	PoisonReleased = true
	const base, size = 0x40000, 24 * PageSize
	recycled := 0
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		m := New()
		if err := m.Map(base, size, PermR|PermW); err != nil {
			t.Fatal(err)
		}
		live := make([]byte, size)
		type node struct {
			s     *Snapshot
			bytes []byte
		}
		stack := []node{{m.Snapshot(), bytes.Clone(live)}}
		check := func(where string) {
			got := make([]byte, size)
			if err := m.ReadBytes(base, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, live) {
				t.Fatalf("seed %d, %s: the live state differs from its model", seed, where)
			}
			for i, n := range stack {
				if err := n.s.ReadBytes(base, got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, n.bytes) {
					t.Fatalf("seed %d, %s: node %d's snapshot differs from its model", seed, where, i)
				}
			}
		}
		for op := 0; op < 3000; op++ {
			switch k := r.IntN(20); {
			case k < 12: // a write, of one byte or a run across pages
				a := uint64(r.IntN(size - 64))
				b := make([]byte, 1+r.IntN(64))
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				if err := m.WriteBytes(base+a, b); err != nil {
					t.Fatal(err)
				}
				copy(live[a:], b)
			case k < 16 && len(stack) < 40: // a node
				stack = append(stack, node{m.Snapshot(), bytes.Clone(live)})
			case k < 17: // a transient snapshot: away to a node and back
				end, endBytes := m.Snapshot(), bytes.Clone(live)
				n := stack[r.IntN(len(stack))]
				m.Restore(n.s)
				for i := 0; i < 3; i++ {
					a := uint64(r.IntN(size))
					if err := m.WriteBytes(base+a, []byte{byte(i)}); err != nil {
						t.Fatal(err)
					}
				}
				m.Restore(end)
				live = endBytes
			default: // a backtrack: restore node d, release those below
				d := r.IntN(len(stack))
				m.Restore(stack[d].s)
				before := len(m.free.pages) + len(m.free.leaves) + len(m.free.inners)
				for _, n := range stack[d+1:] {
					m.Release(n.s)
				}
				recycled += len(m.free.pages) + len(m.free.leaves) + len(m.free.inners) - before
				stack = stack[:d+1]
				live = bytes.Clone(stack[d].bytes)
				check("after a backtrack")
			}
		}
		check("at the end")
	}
	if recycled == 0 {
		t.Fatal("no release recycled anything: the test compares nothing")
	}
	t.Logf("%d objects recycled by releases", recycled)
}

// TestReleasedSnapshot: a released snapshot cannot be restored, another
// memory's snapshot is left alone, and releasing twice is harmless.
func TestReleasedSnapshot(t *testing.T) {
	m, other := New(), New()
	if err := m.Map(0x10000, PageSize, PermR|PermW); err != nil {
		t.Fatal(err)
	}
	root := m.Snapshot()
	m.WriteBytes(0x10000, []byte{1})
	s := m.Snapshot()
	m.Restore(root)
	m.Release(s)
	m.Release(s)
	o := other.Snapshot()
	m.Release(o)
	other.Restore(o) // still valid
	defer func() {
		if recover() == nil {
			t.Error("restoring a released snapshot did not panic")
		}
	}()
	m.Restore(s)
}
