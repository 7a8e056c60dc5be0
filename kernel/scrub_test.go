package kernel

import (
	"bytes"
	"slices"
	"testing"

	"landslide/schedule"
)

// TestReusedSlotReadsZero: a heap slot reused after its quarantine is
// scrubbed, so the new block reads as zero (calloc returns what malloc
// does) whatever the old one held: blocks of less than a page, of pages
// and a part, and of whole pages (which Memory.Zero returns to the zero
// page), each filled with 0xff before it is freed, and the scrub also
// right after a snapshot, whose pages it must not change.
func TestReusedSlotReadsZero(t *testing.T) {
	img := fixtureImage(t, "ref/paradise_lost")
	_, k, snaps := snapshots(t, img, Config{}, schedule.Default{})
	i := slices.IndexFunc(snaps, func(s *snapshot) bool { return s.st.cur >= 0 })
	if i < 0 {
		t.Fatal("no snapshot with a current thread")
	}
	k.Restore(snaps[i])
	for _, size := range []uint64{40, 3*PageSize + 100, 4 * PageSize} {
		first := k.malloc(size)
		if err := k.mem.WriteBytes(first, bytes.Repeat([]byte{0xff}, int(size))); err != nil {
			t.Fatal(err)
		}
		before := k.Snapshot()
		k.free(first, "free")
		// Through the quarantine: other slots of the size, freed too.
		reused := false
		for n := 0; n < 2*quarantineMax && !reused; n++ {
			p := k.malloc(size)
			if p == first {
				reused = true
				got := make([]byte, size)
				if err := k.mem.ReadBytes(p, got); err != nil {
					t.Fatal(err)
				}
				if i := slices.IndexFunc(got, func(b byte) bool { return b != 0 }); i >= 0 {
					t.Errorf("size %d: the reused block holds 0x%x at byte %d", size, got[i], i)
				}
			}
			k.free(p, "free")
		}
		if !reused {
			t.Fatalf("size %d: the slot was never reused", size)
		}
		k.Restore(before)
		got := make([]byte, size)
		if err := k.mem.ReadBytes(first, got); err != nil || !bytes.Equal(got, bytes.Repeat([]byte{0xff}, int(size))) {
			t.Errorf("size %d: the scrub changed the block as the snapshot holds it (%v)", size, err)
		}
	}
}
