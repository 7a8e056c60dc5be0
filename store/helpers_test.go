package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"landslide/race"
	"landslide/record"
	"landslide/report"
)

func openT(t testing.TB, dir string, opt Options) *Store {
	t.Helper()
	s, err := Open(dir, opt)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return s
}

// dump returns every key and value of the store, for before/after
// comparisons.
func dump(t testing.TB, s *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := s.scan(nil, func(k, v []byte) error {
		out[string(k)] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameDump(t testing.TB, what string, a, b map[string]string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: store has %d keys, had %d", what, len(b), len(a))
	}
	for k, v := range a {
		if b[k] != v {
			t.Fatalf("%s: key %q changed", what, k)
		}
	}
}

// synthetic data, deterministic per seed.

func synthTransition(r *rand.Rand, accesses int) *record.Transition {
	t := &record.Transition{
		Thread:       record.TID(1 + r.IntN(4)),
		PP:           record.PP{Kind: record.PPSyncFunc, PC: 0x10000 + uint64(r.IntN(4096))*4, Func: []string{"mutex_lock", "mutex_unlock", "thr_yield"}[r.IntN(3)]},
		Instructions: uint64(50 + r.IntN(2000)),
	}
	for i := 0; i < 3+r.IntN(4); i++ {
		t.Stack = append(t.Stack, 0x10000+uint64(r.IntN(8192))*4)
	}
	base := uint64(0x20000 + r.IntN(64)*64)
	for i := 0; i < accesses; i++ {
		t.Accesses = append(t.Accesses, record.Access{
			Addr:   base + uint64(r.IntN(256))*4,
			Size:   4,
			Write:  r.IntN(3) == 0,
			Atomic: r.IntN(20) == 0,
			PC:     0x10000 + uint64(r.IntN(2048))*4,
			Block:  uint32(r.IntN(4)),
			Gen:    uint32(r.IntN(2)),
			Sync:   uint32(r.IntN(3)),
		})
	}
	for i := 0; i < r.IntN(3); i++ {
		t.Sync = append(t.Sync, record.SyncEvent{Kind: record.SyncEnter, Other: record.TID(r.IntN(3)),
			Func: record.MutexLock, Arg: 0x20040, Block: 1, Gen: 0, PC: 0x10100})
	}
	if t.Thread == 2 && len(t.Accesses) > 0 {
		// Thread 2's own stack, exposed (no draw from r: the other
		// fields' sequence stays as it was).
		a := t.Accesses[0]
		a.Addr, a.Block, a.Gen = 0x7fefffff20+a.Addr%64, 0, 0
		t.Own = []record.Access{a}
	}
	return t
}

func synthBranches(r *rand.Rand, first, n, trans, accesses int) []*BranchRecord {
	var out []*BranchRecord
	for i := 0; i < n; i++ {
		b := &BranchRecord{N: first + i, Div: r.IntN(5)}
		for j := 0; j < trans; j++ {
			b.Transitions = append(b.Transitions, synthTransition(r, accesses))
		}
		for j := 0; j < r.IntN(6); j++ {
			x := r.IntN(trans + b.Div)
			b.Pairs = append(b.Pairs, [2]int{x, b.Div + r.IntN(trans)})
		}
		out = append(out, b)
	}
	return out
}

func synthChoices(r *rand.Rand, n int) []record.Choice {
	out := make([]record.Choice, n)
	for i := range out {
		out[i] = record.Choice{Thread: record.TID(1 + r.IntN(3))}
		if r.IntN(5) == 0 {
			out[i].Value = int64(r.IntN(7)) - 3
		}
	}
	return out
}

func synthTrace(r *rand.Rand, run string, job, id, n int) *TraceRecord {
	t := &TraceRecord{Run: run, Job: job, ID: id, Kind: "bug", Choices: synthChoices(r, n)}
	if id%2 == 0 {
		// A minimization of the trace before it (landslide minimize).
		t.Kind, t.Of, t.Explain = TraceMinimal, id-1, `{"from_preemptions":3,"proved":true}`
	}
	for i := 0; i < n; i++ {
		tr := synthTransition(r, 5)
		t.Transitions = append(t.Transitions, tr)
		t.Hashes = append(t.Hashes, record.Hash([]*record.Transition{tr}))
		t.Preempted = append(t.Preempted, r.IntN(2) == 0)
	}
	return t
}

func synthRace(run string, job int, a, b uint64, count int) *RaceRecord {
	return &RaceRecord{Run: run, Job: job,
		Candidate: race.Candidate{
			A:         race.Side{PC: a, Addr: 0x20040, Thread: 1, Write: true, Tr: 2},
			B:         race.Side{PC: b, Addr: 0x20040, Thread: 2, Atomic: true, Tr: 5},
			BothOrder: true, FirstInterleaving: count == 1, Realloc: false, Count: count, Branch: 3, I: 2, J: 5,
		},
		StackA: []report.Frame{{PC: a, Func: "thread1", Offset: 8, File: "fig1.c", Line: 12, Text: "thread1 (fig1.c:12)"}},
		StackB: []report.Frame{{PC: b, Func: "thread2", Offset: 4, File: "fig1.c", Line: 20, Text: "thread2 (fig1.c:20)"},
			{PC: 0x10010, Func: "main", Text: "main"}},
		Data: "heap block 2 from thr_create+8",
	}
}

func synthPage(seed byte) []byte {
	p := make([]byte, 4096)
	for i := range p {
		p[i] = seed ^ byte(i*7)
	}
	return p
}

// faultFS wraps a vfs.FS: once armed, writes fail with ENOSPC after
// budget more bytes (a full disk), or every write fails with EROFS (a
// read-only file system).
type faultFS struct {
	vfs.FS
	mu     sync.Mutex
	armed  bool
	budget int64
	rofs   bool
}

func (f *faultFS) arm(budget int64, rofs bool) {
	f.mu.Lock()
	f.armed, f.budget, f.rofs = true, budget, rofs
	f.mu.Unlock()
}

// take consumes n bytes of budget; it returns how many may be written
// and the error for the rest.
func (f *faultFS) take(n int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case !f.armed:
		return n, nil
	case f.rofs:
		return 0, syscall.EROFS
	case int64(n) <= f.budget:
		f.budget -= int64(n)
		return n, nil
	}
	ok := int(f.budget)
	f.budget = 0
	return ok, syscall.ENOSPC
}

func (f *faultFS) roErr(op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed && f.rofs {
		return &os.PathError{Op: op, Path: name, Err: syscall.EROFS}
	}
	return nil
}

func (f *faultFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := f.roErr("create", name); err != nil {
		return nil, err
	}
	file, err := f.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if err := f.roErr("open", name); err != nil {
		return nil, err
	}
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := f.roErr("rename", name); err != nil {
		return nil, err
	}
	file, err := f.FS.ReuseForWrite(old, name, c)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) Rename(a, b string) error {
	if err := f.roErr("rename", b); err != nil {
		return err
	}
	return f.FS.Rename(a, b)
}

func (f *faultFS) Remove(name string) error {
	if err := f.roErr("remove", name); err != nil {
		return err
	}
	return f.FS.Remove(name)
}

func (f *faultFS) Link(a, b string) error {
	if err := f.roErr("link", b); err != nil {
		return err
	}
	return f.FS.Link(a, b)
}

func (f *faultFS) MkdirAll(name string, perm os.FileMode) error {
	if err := f.roErr("mkdir", name); err != nil {
		return err
	}
	return f.FS.MkdirAll(name, perm)
}

type faultFile struct {
	vfs.File
	fs *faultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	ok, err := f.fs.take(len(p))
	n, werr := f.File.Write(p[:ok])
	if werr != nil {
		return n, werr
	}
	return n, err
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	ok, err := f.fs.take(len(p))
	n, werr := f.File.WriteAt(p[:ok], off)
	if werr != nil {
		return n, werr
	}
	return n, err
}

func (f *faultFile) Preallocate(off, n int64) error {
	if _, err := f.fs.take(0); err != nil {
		return err
	}
	return f.File.Preallocate(off, n)
}

func (f *faultFile) Sync() error {
	if err := f.fs.roErr("sync", ""); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) SyncData() error {
	if err := f.fs.roErr("sync", ""); err != nil {
		return err
	}
	return f.File.SyncData()
}

func (f *faultFile) SyncTo(n int64) (bool, error) {
	if err := f.fs.roErr("sync", ""); err != nil {
		return false, err
	}
	return f.File.SyncTo(n)
}

// rawPebble opens dir with Pebble directly (to plant bad versions).
func rawPebble(t testing.TB, dir string) *pebble.DB {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}, FormatMajorVersion: pebbleFormat})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var _ = bytes.Equal
var _ = fmt.Sprint
