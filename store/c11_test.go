package store

import (
	"reflect"
	"testing"

	"landslide/race"
	"landslide/record"
)

// TestC11RoundTrip: the C11 order of every access (Acquire, Release, in
// every combination with Write and Atomic, and with the fields the access
// table packs by delta) and standalone fences (SyncFence with its
// FenceAcquire/FenceRelease argument) survive a branch chunk's encoding,
// so the offline race analysis sees what the exploration saw: the same
// candidates from the decoded transitions, in both modes.
func TestC11RoundTrip(t *testing.T) {
	const flag, data = 0x1100, 0x1000
	var accs []record.Access
	for bits := range 16 {
		accs = append(accs, record.Access{
			Addr: flag + uint64(bits%3)*4, Size: 4, PC: 0x100 + uint64(bits)*4,
			Write: bits&1 != 0, Atomic: bits&2 != 0, Acquire: bits&4 != 0, Release: bits&8 != 0,
			Block: uint32(bits / 8), Gen: uint32(bits / 8), Sync: uint32(bits / 4),
		})
	}
	all := &record.Transition{Thread: 1, Accesses: accs, Sync: []record.SyncEvent{
		{Kind: record.SyncFence, Arg: record.FenceAcquire, PC: 0x200},
		{Kind: record.SyncFence, Arg: record.FenceRelease, PC: 0x204},
		{Kind: record.SyncFence, Arg: record.FenceAcquire | record.FenceRelease, PC: 0x208},
	}}
	// Message passing with fences: T1 writes data, a release fence, a
	// relaxed store; T2 a relaxed load, an acquire fence, reads data. And
	// with a release store and an acquire load.
	mp := []*record.Transition{
		{Thread: 1, Sync: []record.SyncEvent{{Kind: record.SyncCreate, Other: 2}, {Kind: record.SyncFence, Arg: record.FenceRelease}},
			Accesses: []record.Access{
				{Addr: data, Size: 4, Write: true, PC: 0x300, Sync: 1},
				{Addr: flag, Size: 4, Write: true, Atomic: true, PC: 0x304, Sync: 2},
				{Addr: flag + 4, Size: 4, Write: true, Atomic: true, Release: true, PC: 0x308, Sync: 2},
			}},
		{Thread: 2, Sync: []record.SyncEvent{{Kind: record.SyncFence, Arg: record.FenceAcquire}},
			Accesses: []record.Access{
				{Addr: flag, Size: 4, Atomic: true, PC: 0x400},
				{Addr: data, Size: 4, PC: 0x404},
				{Addr: flag + 4, Size: 4, Atomic: true, Acquire: true, PC: 0x408, Sync: 1},
				{Addr: data, Size: 4, PC: 0x40c, Sync: 1},
			}},
	}
	in := []*BranchRecord{
		{N: 1, Transitions: []*record.Transition{all}},
		{N: 2, Transitions: mp, Pairs: [][2]int{{0, 1}}},
	}
	e := &enc{}
	encBranches(e, in)
	out, err := decodeBranches(e.b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		for i := range in {
			for j := range in[i].Transitions {
				if !reflect.DeepEqual(in[i].Transitions[j], out[i].Transitions[j]) {
					t.Errorf("branch %d, transition %d:\n in %+v\nout %+v", i, j, in[i].Transitions[j], out[i].Transitions[j])
				}
			}
		}
		t.Fatal("the branch records changed in the round trip")
	}
	for _, md := range []race.Mode{race.Limited, race.Pure} {
		want := race.New(md, race.Options{}).Branch(in[1].Transitions, in[1].Pairs)
		got := race.New(md, race.Options{}).Branch(out[1].Transitions, out[1].Pairs)
		// The data read before the acquire fence races; the one after
		// it is ordered by the fences.
		if len(want) != 1 || want[0].Key() != [2]uint64{0x300, 0x404} || !reflect.DeepEqual(got, want) {
			t.Errorf("%v: candidates from the decoded branch %v, from the original %v, want only 0x300/0x404", md, got, want)
		}
	}
}
