package store

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"landslide/record"
)

// smallArchive is a valid archive of a small run (one job, branch chunk,
// race, trace, bug, checkpoint with pages), a seed for FuzzImport.
func smallArchive(t testing.TB) []byte {
	s := openT(t, t.TempDir(), Options{})
	defer s.Close()
	r := rand.New(rand.NewPCG(9, 9))
	hash, err := s.PutBinary([]byte("\x7fELF tiny"))
	must(t, err)
	run := &Run{Command: "explore", Program: "p.elf", Binary: hash, Status: StatusBug}
	must(t, s.NewRun(run))
	job := &Job{Run: run.ID, PPSet: []string{"mutex_lock"}}
	tr := synthTrace(r, run.ID, 0, 1, 3)
	for _, t := range tr.Transitions {
		t.Accesses = t.Accesses[:2]
	}
	brs := synthBranches(r, 1, 2, 1, 3)
	must(t, s.Commit(&Commit{Run: run, Job: job, Frontier: []byte("f"), State: []byte("s"), Branches: brs,
		Races:  []*RaceRecord{synthRace(run.ID, 0, 1, 2, 1)},
		Traces: []*TraceRecord{tr},
		Bugs:   []*BugRecord{{Run: run.ID, Job: 0, Trace: 1, Kind: record.BugAssert, Message: "m", Funcs: []string{"f"}}},
		Checkpoints: []*CheckpointRecord{{Machine: "m1", Prefix: PrefixHash(tr.Choices[:1]), Depth: 1, State: []byte("st"),
			Pages: []PageRecord{{Addr: 4096, Data: bytes.Repeat([]byte{7}, 4096)}, {Addr: 8192}}}},
	}))
	var buf bytes.Buffer
	must(t, s.Export(run.ID, &buf))
	return buf.Bytes()
}

// FuzzImport feeds arbitrary bytes to Import: no panic, bounded memory,
// and whatever is accepted reads back.
func FuzzImport(f *testing.F) {
	arc := smallArchive(f)
	f.Add(arc)
	f.Add(arc[:len(arc)/2])
	f.Add([]byte(archiveMagic))
	f.Add(append([]byte(archiveMagic), 0, 0, 0, 1, 0, 0, 0, 0))
	// Archives that decompress far past their size (MaxExpansion).
	for _, bomb := range expansionBombs(f, records(f, arc)) {
		f.Add(bomb)
	}
	// The store is in memory, and replaced after every accepted archive,
	// so that every input meets the same store (coverage stays stable).
	base := f.TempDir()
	fresh := func() *Store {
		dir, err := os.MkdirTemp(base, "s")
		if err != nil {
			panic(err)
		}
		s, err := Open(dir, Options{FS: vfs.NewMem()})
		if err != nil {
			panic(err)
		}
		return s
	}
	s := fresh()
	f.Cleanup(func() { s.Close() })
	lim := ImportLimits{MaxBytes: 4 << 20, MaxRecord: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := s.ImportLimited(bytes.NewReader(data), lim)
		if err != nil {
			if !errors.Is(err, ErrArchive) {
				t.Fatalf("import error not wrapping ErrArchive: %v", err)
			}
			return
		}
		defer func() {
			s.Close()
			s = fresh()
		}()
		// Accepted: it must read back.
		if _, err := s.Run(id); err != nil {
			t.Fatal(err)
		}
		jobs, err := s.Jobs(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if err := s.Branches(id, j.ID, func(*BranchRecord) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Races(id, j.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Traces(id); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Bugs(id); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecodeRecords feeds arbitrary bytes to every record decoder: no
// panic, allocation bounded by the input's length, and what decodes
// re-encodes to something that decodes to the same.
func FuzzDecodeRecords(f *testing.F) {
	r := rand.New(rand.NewPCG(4, 4))
	e := &enc{}
	encBranches(e, synthBranches(r, 1, 2, 2, 3))
	f.Add(byte(0), e.b)
	// Accesses with their C11 order (the access table's order byte) and
	// fences.
	ordered := synthBranches(r, 3, 1, 1, 4)
	for i, a := range ordered[0].Transitions[0].Accesses {
		a.Atomic, a.Acquire, a.Release = true, i&1 != 0, i&2 != 0
		ordered[0].Transitions[0].Accesses[i] = a
	}
	ordered[0].Transitions[0].Sync = append(ordered[0].Transitions[0].Sync, record.SyncEvent{Kind: record.SyncFence, Arg: record.FenceAcquire | record.FenceRelease})
	e = &enc{}
	encBranches(e, ordered)
	f.Add(byte(0), e.b)
	f.Add(byte(1), encodeTrace(synthTrace(r, "0123456789ab", 1, 2, 2)))
	f.Add(byte(2), encodeRace(synthRace("0123456789ab", 1, 5, 6, 2)))
	f.Add(byte(3), encodeCheckpoint(&storedCheckpoint{Machine: "m", Depth: 2, State: []byte("x"),
		Pages: []pageRef{{Addr: 1, Zero: true}, {Addr: 2, Hash: [32]byte{1}}}}))
	f.Add(byte(4), pack(nil, bytes.Repeat([]byte("abc"), 100), true))
	run, _ := packMsgpack(&Run{ID: "0123456789ab", Args: []string{"a"}, Env: Env{CPUs: 2}})
	f.Add(byte(5), run)
	job, _ := packMsgpack(&Job{Run: "0123456789ab", PPSet: []string{"x"}, EstSize: 1.5})
	f.Add(byte(6), job)
	bug, _ := packMsgpack(&BugRecord{Run: "0123456789ab", Funcs: []string{"f", "g"}})
	f.Add(byte(7), bug)
	// A claimed 2^32-element array in a few bytes.
	f.Add(byte(0), []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x94})
	f.Add(byte(5), []byte{envRaw, 0x81, 0xa4, 'a', 'r', 'g', 's', 0xdd, 0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, kind byte, data []byte) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		decodeOne(t, kind, data)
		runtime.ReadMemStats(&ms)
		if got, max := ms.TotalAlloc-before, uint64(64*len(data))+8<<20; got > max {
			t.Fatalf("decoding %d bytes (kind %d) allocated %d bytes", len(data), kind%8, got)
		}
	})
}

func decodeOne(t *testing.T, kind byte, data []byte) {
	same := func(a, b any) {
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip differs:\n%+v\n%+v", a, b)
		}
	}
	switch kind % 8 {
	case 0:
		brs, err := decodeBranches(data)
		if err == nil {
			e := &enc{}
			encBranches(e, brs)
			again, err := decodeBranches(e.b)
			if err != nil {
				t.Fatal(err)
			}
			same(brs, again)
		}
	case 1:
		tr, err := decodeTrace(data)
		if err == nil {
			again, err := decodeTrace(encodeTrace(tr))
			if err != nil {
				t.Fatal(err)
			}
			same(tr, again)
		}
	case 2:
		rr, err := decodeRace(data)
		if err == nil {
			again, err := decodeRace(encodeRace(rr))
			if err != nil {
				t.Fatal(err)
			}
			same(rr, again)
		}
	case 3:
		c, err := decodeCheckpoint(data)
		if err == nil {
			again, err := decodeCheckpoint(encodeCheckpoint(c))
			if err != nil {
				t.Fatal(err)
			}
			same(c, again)
		}
	case 4:
		_, _ = unpack(data, 1<<20)
	case 5:
		_ = unpackMsgpack(data, new(Run), 1<<20)
	case 6:
		_ = unpackMsgpack(data, new(Job), 1<<20)
	case 7:
		_ = unpackMsgpack(data, new(BugRecord), 1<<20)
	}
}
