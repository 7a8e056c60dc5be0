package store

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"landslide/record"
)

// world is a run with everything a commit can hold, for round trips.
type world struct {
	run      *Run
	binary   []byte
	jobs     []*Job
	branches map[int][]*BranchRecord
	races    map[int][]*RaceRecord
	traces   []*TraceRecord
	bugs     []*BugRecord
	ckpts    []*CheckpointRecord // along the traces (exported)
	stray    *CheckpointRecord   // not on any trace (not exported)
	machine  string
}

func buildWorld(t testing.TB, s *Store, seed uint64) *world {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	w := &world{binary: []byte(fmt.Sprintf("\x7fELF synthetic binary %d %s", seed, strings.Repeat("code", 300))),
		branches: map[int][]*BranchRecord{}, races: map[int][]*RaceRecord{}, machine: fmt.Sprintf("m%016x", seed)}
	hash, err := s.PutBinary(w.binary)
	must(t, err)
	w.run = &Run{Command: "explore", Program: "fixtures/bin/ref/x.elf", Binary: hash,
		Args: []string{"--pp", "mutex_lock"}, Spec: []byte{1, 2, 3}, Env: Env{Version: "dev", GoVersion: "go1.26", OS: "linux", Arch: "amd64", Host: "h", CPUs: 2},
		Status: StatusRunning}
	must(t, s.NewRun(w.run))
	id := w.run.ID
	for j := 0; j < 2; j++ {
		job := &Job{Run: id, ID: j, PPSet: []string{"mutex_lock", fmt.Sprint(j)}, Status: StatusRunning}
		w.jobs = append(w.jobs, job)
		for c := 0; c < 3; c++ {
			brs := synthBranches(r, 1+c*4, 4, 3, 10)
			w.branches[j] = append(w.branches[j], brs...)
			job.Interleavings += 4
			job.EstSize = 12.5 * float64(c+1)
			tr := synthTrace(r, id, j, c, 6)
			pages := []PageRecord{{Addr: 0x1000, Data: synthPage(byte(seed * 8))}, {Addr: 0x2000, Data: nil}, {Addr: 0x3000, Data: synthPage(byte(seed*8 + 1 + uint64(c)))}}
			cps := []*CheckpointRecord{
				{Machine: w.machine, Prefix: PrefixHash(tr.Choices[:2]), Depth: 2, State: []byte(fmt.Sprintf("state %d %d", j, c)), Pages: pages},
				{Machine: w.machine, Prefix: PrefixHash(tr.Choices[:4]), Depth: 4, State: []byte("s4"), Pages: pages[:1]},
			}
			w.ckpts = append(w.ckpts, cps...)
			bug := &BugRecord{Run: id, Job: j, Trace: c, Kind: record.BugAssert, Message: "assertion failed",
				Thread: 2, PC: 0x10400, Signature: Signature(record.BugAssert, "thread2", 8, []string{"thread2", "main"}),
				Funcs: []string{"thread2", "main"}}
			races := []*RaceRecord{synthRace(id, j, 0x10100, 0x10200+uint64(c), c+1)}
			w.traces = append(w.traces, tr)
			w.bugs = append(w.bugs, bug)
			w.races[j] = append(w.races[j], races...)
			job.Status = StatusBug
			must(t, s.Commit(&Commit{Run: w.run, Job: job, Frontier: []byte(fmt.Sprintf("frontier %d %d", j, c)),
				State: []byte(fmt.Sprintf("analyzer %d %d", j, c)), Branches: brs, Races: races,
				Traces: []*TraceRecord{tr}, Bugs: []*BugRecord{bug}, Checkpoints: cps}))
		}
	}
	w.stray = &CheckpointRecord{Machine: w.machine, Prefix: PrefixHash(synthChoices(r, 30)), Depth: 30, State: []byte("stray"),
		Pages: []PageRecord{{Addr: 0x9000, Data: synthPage(99)}}}
	must(t, s.Commit(&Commit{Run: w.run, Checkpoints: []*CheckpointRecord{w.stray}}))
	return w
}

// check verifies that s holds w (the stray checkpoint only if stray).
func (w *world) check(t testing.TB, s *Store, stray bool) {
	t.Helper()
	id := w.run.ID
	r, err := s.Run(id)
	must(t, err)
	if !reflect.DeepEqual(r, w.run) {
		t.Fatalf("run:\n got %+v\nwant %+v", r, w.run)
	}
	img, err := s.Binary(r.Binary)
	must(t, err)
	if string(img) != string(w.binary) {
		t.Fatal("binary differs")
	}
	jobs, err := s.Jobs(id)
	must(t, err)
	if !reflect.DeepEqual(jobs, w.jobs) {
		t.Fatalf("jobs:\n got %+v\nwant %+v", jobs, w.jobs)
	}
	for _, j := range w.jobs {
		f, err := s.Frontier(id, j.ID)
		must(t, err)
		st, err := s.State(id, j.ID)
		must(t, err)
		if string(f) != fmt.Sprintf("frontier %d 2", j.ID) || string(st) != fmt.Sprintf("analyzer %d 2", j.ID) {
			t.Fatalf("job %d: frontier %q state %q", j.ID, f, st)
		}
		var got []*BranchRecord
		must(t, s.Branches(id, j.ID, func(b *BranchRecord) error { got = append(got, b); return nil }))
		if !reflect.DeepEqual(got, w.branches[j.ID]) {
			t.Fatalf("job %d: branches differ (%d vs %d)", j.ID, len(got), len(w.branches[j.ID]))
		}
		races, err := s.Races(id, j.ID)
		must(t, err)
		if !reflect.DeepEqual(races, w.races[j.ID]) {
			t.Fatalf("job %d races:\n got %+v\nwant %+v", j.ID, races, w.races[j.ID])
		}
	}
	traces, err := s.Traces(id)
	must(t, err)
	if !reflect.DeepEqual(traces, w.traces) {
		t.Fatal("traces differ")
	}
	tr, err := s.Trace(id, 1, 2)
	must(t, err)
	if !reflect.DeepEqual(tr, w.traces[5]) {
		t.Fatal("Trace(1, 2) differs")
	}
	bugs, err := s.Bugs(id)
	must(t, err)
	if !reflect.DeepEqual(bugs, w.bugs) {
		t.Fatalf("bugs:\n got %+v\nwant %+v", bugs, w.bugs)
	}
	seen := map[[32]byte]bool{}
	for i := len(w.ckpts) - 1; i >= 0; i-- { // the last write of a key wins
		cp := w.ckpts[i]
		if seen[cp.Prefix] {
			continue
		}
		seen[cp.Prefix] = true
		got, err := s.Checkpoint(cp.Machine, cp.Prefix)
		must(t, err)
		if !reflect.DeepEqual(got, cp) {
			t.Fatalf("checkpoint at depth %d differs", cp.Depth)
		}
	}
	_, err = s.Checkpoint(w.stray.Machine, w.stray.Prefix)
	if stray {
		must(t, err)
	} else if !errors.Is(err, ErrNotFound) {
		t.Fatalf("stray checkpoint: %v, want ErrNotFound", err)
	}
}

func TestOpenCloseReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws", ".landslide")
	s := openT(t, dir, Options{})
	if s.Dir() != dir {
		t.Fatalf("Dir() = %q", s.Dir())
	}
	w := buildWorld(t, s, 1)
	w.check(t, s, true)
	must(t, s.Close())
	must(t, s.Close()) // idempotent
	if _, err := s.Runs(); err == nil {
		t.Fatal("Runs on a closed store succeeded")
	}

	s = openT(t, dir, Options{})
	w.check(t, s, true)
	must(t, s.Close())

	ro := openT(t, dir, Options{ReadOnly: true})
	w.check(t, ro, true)
	if _, err := ro.PutBinary([]byte("x")); err == nil {
		t.Fatal("PutBinary on a read-only store succeeded")
	}
	if err := ro.Commit(&Commit{Run: w.run}); err == nil {
		t.Fatal("Commit on a read-only store succeeded")
	}
	must(t, ro.Close())
}

func TestVersionMismatch(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	must(t, s.Close())

	db := rawPebble(t, dir)
	must(t, db.Set(keyVersion, []byte("2"), nil))
	must(t, db.Close())
	for _, ro := range []bool{false, true} {
		_, err := Open(dir, Options{ReadOnly: ro})
		if !errors.Is(err, ErrVersion) {
			t.Fatalf("ReadOnly=%v: %v, want ErrVersion", ro, err)
		}
		if !strings.Contains(err.Error(), `"2"`) || !strings.Contains(err.Error(), "supports version 1") {
			t.Fatalf("message does not name both versions: %v", err)
		}
	}

	// A Pebble database that is not a landslide store.
	dir2 := t.TempDir()
	db = rawPebble(t, dir2)
	must(t, db.Set([]byte("some/key"), []byte("v"), nil))
	must(t, db.Close())
	_, err := Open(dir2, Options{})
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "no landslide format version") {
		t.Fatalf("foreign Pebble DB: %v", err)
	}

	// A store whose creation was killed before its version record: to a
	// reader it is no store yet; the next writer finishes it.
	dir3 := t.TempDir()
	must(t, rawPebble(t, dir3).Close())
	if _, err := Open(dir3, Options{ReadOnly: true}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("empty, read-only: %v, want no store (interrupted creation)", err)
	}
	st, err := Open(dir3, Options{})
	if err != nil {
		t.Fatalf("empty, read-write: %v", err)
	}
	must(t, st.Close())
	st, err = Open(dir3, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("finished store, read-only: %v", err)
	}
	must(t, st.Close())
}

func TestNotAStore(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "not a landslide store") {
		t.Fatalf("Open(non-store dir): %v", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "notes.txt" && e.Name() != LockFile {
			t.Fatalf("Open left %s in a directory that is not a store", e.Name())
		}
	}
	if _, err := Open(filepath.Join(dir, "missing"), Options{ReadOnly: true}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read-only open of a missing store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatal("read-only open created the directory")
	}
	empty := t.TempDir()
	if _, err := Open(empty, Options{ReadOnly: true}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read-only open of an empty directory: %v", err)
	}
	file := filepath.Join(dir, "notes.txt")
	if _, err := Open(file, Options{}); err == nil {
		t.Fatal("Open(a file) succeeded")
	}
}

func TestLocked(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	want := fmt.Sprintf("workspace %s is in use by another landslide process (pid %d)", dir, os.Getpid())
	for _, ro := range []bool{false, true} {
		_, err := Open(dir, Options{ReadOnly: ro})
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), want) {
			t.Fatalf("second open (ReadOnly=%v) while a writer holds it: %v", ro, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, LockFile))
	if strings.TrimSpace(string(b)) != fmt.Sprint(os.Getpid()) {
		t.Fatalf("lock file holds %q", b)
	}
	must(t, s.Close())

	// Readers share; a writer waits for all of them.
	r1 := openT(t, dir, Options{ReadOnly: true})
	r2 := openT(t, dir, Options{ReadOnly: true})
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("writer while readers hold the store: %v", err)
	}
	must(t, r1.Close())
	must(t, r2.Close())
	s = openT(t, dir, Options{})
	must(t, s.Close())
}

// TestCommitDiskFull: a commit that hits a full disk fails, the store
// stays as it was, and reopening shows everything committed before.
func TestCommitDiskFull(t *testing.T) {
	for _, budget := range []int64{0, 100, 5000} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			testCommitFault(t, budget, false)
		})
	}
}

// TestCommitReadOnlyFS: the file system turns read-only under an open
// store (EROFS): the commit fails, nothing is lost.
func TestCommitReadOnlyFS(t *testing.T) {
	testCommitFault(t, 0, true)
}

func testCommitFault(t *testing.T, budget int64, rofs bool) {
	dir := t.TempDir()
	ffs := &faultFS{FS: vfs.Default}
	s := openT(t, dir, Options{FS: ffs})
	w := buildWorld(t, s, 2)
	before := dump(t, s)

	r := rand.New(rand.NewPCG(3, 3))
	job := &Job{Run: w.run.ID, ID: 7, Status: StatusRunning}
	big := &Commit{Run: w.run, Job: job, Branches: synthBranches(r, 1, 200, 4, 40),
		Bugs: []*BugRecord{{Run: w.run.ID, Job: 7, Trace: 1, Kind: record.BugHeap, Message: "lost"}}}
	ffs.arm(budget, rofs)
	oldUpdated := w.run.Updated
	err := s.Commit(big)
	if err == nil {
		t.Fatal("commit on a failing disk succeeded")
	}
	t.Logf("commit: %v", err)
	if job.Commits != 0 || w.run.Updated != oldUpdated {
		t.Fatal("a failed commit changed the caller's Job.Commits or Run.Updated")
	}
	if err := s.Commit(&Commit{Run: w.run}); err == nil {
		t.Fatal("a commit after a fatal failure succeeded")
	}
	_ = s.Close()

	s = openT(t, dir, Options{})
	defer s.Close()
	after := dump(t, s)
	// All of the failed commit, or none of it.
	_, hasJob := after[string(keyJob(w.run.ID, 7))]
	_, hasBug := after[string(keyBug(w.run.ID, 7, 1))]
	if hasJob != hasBug {
		t.Fatalf("a failed commit was partly applied (job %v, bug %v)", hasJob, hasBug)
	}
	if hasJob {
		t.Logf("the failed commit reached the disk whole")
		for k := range after {
			if _, ok := before[k]; !ok && !strings.HasPrefix(k, "job/") && !strings.HasPrefix(k, "bug/") && !strings.HasPrefix(k, "br/") {
				t.Fatalf("unexpected key %q", k)
			}
		}
	} else {
		// The run record may be the one of the failed commit only if
		// the rest is there too.
		sameDump(t, "after a failed commit", before, after)
	}
	w.check(t, s, true)
}

// TestOpenReadOnlyFS: opening for writing on a read-only file system fails
// cleanly, and the store is intact.
func TestOpenReadOnlyFS(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	w := buildWorld(t, s, 4)
	before := dump(t, s)
	must(t, s.Close())

	ffs := &faultFS{FS: vfs.Default}
	ffs.arm(0, true)
	if s, err := Open(dir, Options{FS: ffs}); err == nil {
		s.Close()
		t.Fatal("writable open on a read-only file system succeeded")
	}
	// A new store cannot be created there either.
	if s, err := Open(filepath.Join(t.TempDir(), "new"), Options{FS: ffs}); err == nil {
		s.Close()
		t.Fatal("store created on a read-only file system")
	}
	// Reading works.
	ro := openT(t, dir, Options{ReadOnly: true, FS: ffs})
	w.check(t, ro, true)
	must(t, ro.Close())

	s = openT(t, dir, Options{})
	defer s.Close()
	sameDump(t, "after a failed open", before, dump(t, s))
}

func TestBranchesOrderAndStop(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	defer s.Close()
	run := &Run{Command: "explore"}
	must(t, s.NewRun(run))
	job := &Job{Run: run.ID, ID: 3}
	r := rand.New(rand.NewPCG(5, 5))
	// Commits out of order, and a chunk given unsorted.
	c2 := synthBranches(r, 21, 10, 2, 3)
	c1 := synthBranches(r, 1, 20, 2, 3)
	c3 := synthBranches(r, 31, 5, 2, 3)
	c3[0], c3[4] = c3[4], c3[0]
	for _, brs := range [][]*BranchRecord{c2, c1, c3} {
		must(t, s.Commit(&Commit{Job: job, Branches: brs}))
	}
	if job.Commits != 3 {
		t.Fatalf("Job.Commits = %d", job.Commits)
	}
	n := 0
	must(t, s.Branches(run.ID, 3, func(b *BranchRecord) error {
		n++
		if b.N != n {
			t.Fatalf("branch %d came as number %d", b.N, n)
		}
		return nil
	}))
	if n != 35 {
		t.Fatalf("%d branches, want 35", n)
	}
	stop := errors.New("stop")
	n = 0
	err := s.Branches(run.ID, 3, func(b *BranchRecord) error {
		if n++; n == 25 {
			return stop
		}
		return nil
	})
	if err != stop || n != 25 {
		t.Fatalf("stop: err %v after %d", err, n)
	}
	// Other jobs are empty.
	must(t, s.Branches(run.ID, 4, func(*BranchRecord) error { t.Fatal("job 4 has branches"); return nil }))
	if err := s.Commit(&Commit{Job: job, Branches: []*BranchRecord{{N: 0}}}); err == nil {
		t.Fatal("branch N=0 accepted")
	}
}

func TestRacesUpsert(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	defer s.Close()
	run := &Run{}
	must(t, s.NewRun(run))
	job := &Job{Run: run.ID, ID: 0}
	must(t, s.Commit(&Commit{Job: job, Races: []*RaceRecord{synthRace(run.ID, 0, 0x100, 0x200, 1), synthRace(run.ID, 0, 0x100, 0x300, 1)}}))
	up := synthRace("", 0, 0x100, 0x200, 9) // Run filled from the job
	must(t, s.Commit(&Commit{Job: job, Races: []*RaceRecord{up}}))
	races, err := s.Races(run.ID, 0)
	must(t, err)
	if len(races) != 2 || races[0].Candidate.Count != 9 || races[1].Candidate.Count != 1 || races[0].Run != run.ID {
		t.Fatalf("after upsert: %+v", races)
	}
}

func TestBugsAcrossRuns(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	defer s.Close()
	var runs []*Run
	for i := 0; i < 3; i++ {
		r := &Run{Command: "explore", Program: fmt.Sprint(i)}
		must(t, s.NewRun(r))
		runs = append(runs, r)
		for j := 0; j < i; j++ {
			must(t, s.Commit(&Commit{Run: r, Bugs: []*BugRecord{{Run: r.ID, Job: j, Trace: 1, Kind: record.BugDeadlock, Message: "deadlock"}}}))
		}
	}
	all, err := s.Bugs("")
	must(t, err)
	if len(all) != 3 {
		t.Fatalf("Bugs(\"\") = %d bugs, want 3", len(all))
	}
	one, err := s.Bugs(runs[2].ID)
	must(t, err)
	if len(one) != 2 || one[0].Run != runs[2].ID || one[1].Job != 1 {
		t.Fatalf("Bugs(run 2) = %+v", one)
	}
	none, err := s.Bugs(runs[0].ID)
	must(t, err)
	if len(none) != 0 {
		t.Fatal("run 0 has bugs")
	}
	got, err := s.Runs()
	must(t, err)
	if len(got) != 3 {
		t.Fatal("Runs")
	}
	for i := range got {
		if got[i].ID != runs[i].ID {
			t.Fatalf("Runs not in creation order")
		}
	}
	if got[0].ID == got[1].ID || len(got[0].ID) != RunIDLen {
		t.Fatal("bad run ids")
	}
}

func TestRunPrefix(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	defer s.Close()
	byFirst := map[byte][]string{}
	var amb byte
	for i := 0; amb == 0; i++ {
		r := &Run{}
		must(t, s.NewRun(r))
		byFirst[r.ID[0]] = append(byFirst[r.ID[0]], r.ID)
		if len(byFirst[r.ID[0]]) == 2 {
			amb = r.ID[0]
		}
	}
	ids := byFirst[amb]
	_, err := s.Run(string(amb))
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), ids[0]) || !strings.Contains(err.Error(), ids[1]) {
		t.Fatalf("ambiguous prefix: %v", err)
	}
	r, err := s.Run(strings.ToUpper(ids[1][:RunIDLen]))
	must(t, err)
	if r.ID != ids[1] {
		t.Fatal("full id lookup")
	}
	for _, bad := range []string{"", "zz", "../run", ids[0] + "0"} {
		if _, err := s.Run(bad); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Run(%q): %v", bad, err)
		}
	}
}

func TestCheckpointPageDedup(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	defer s.Close()
	run := &Run{}
	must(t, s.NewRun(run))
	shared := []PageRecord{{Addr: 0x1000, Data: synthPage(1)}, {Addr: 0x2000, Data: synthPage(2)}, {Addr: 0x3000}}
	cp1 := &CheckpointRecord{Machine: "abc", Prefix: PrefixHash(nil), Depth: 0, State: []byte("one"),
		Pages: append(append([]PageRecord{}, shared...), PageRecord{Addr: 0x4000, Data: synthPage(3)})}
	cp2 := &CheckpointRecord{Machine: "abc", Prefix: PrefixHash([]record.Choice{{Thread: 1}}), Depth: 1, State: []byte("two"),
		Pages: append(append([]PageRecord{}, shared...), PageRecord{Addr: 0x5000, Data: synthPage(1)})} // same content as 0x1000
	st, err := s.CommitWithStats(&Commit{Run: run, Checkpoints: []*CheckpointRecord{cp1}})
	must(t, err)
	if st.PagesNew != 3 || st.PagesShared != 1 || st.Checkpoints != 1 || st.CheckpointBytes <= 0 || st.Bytes < st.CheckpointBytes {
		t.Fatalf("first commit stats %+v", st)
	}
	st, err = s.CommitWithStats(&Commit{Run: run, Checkpoints: []*CheckpointRecord{cp2}})
	must(t, err)
	if st.PagesNew != 0 || st.PagesShared != 4 {
		t.Fatalf("second commit stats %+v", st)
	}
	u, err := s.Usage()
	must(t, err)
	if u.Kinds["page"].Keys != 3 || u.Kinds["ckpt"].Keys != 2 || u.Kinds["rmach"].Keys != 1 {
		t.Fatalf("usage %+v", u.Kinds)
	}
	if u.Total.Bytes <= u.Kinds["page"].Bytes || u.Disk == 0 {
		t.Fatalf("usage totals %+v", u)
	}
	for _, cp := range []*CheckpointRecord{cp1, cp2} {
		got, err := s.Checkpoint(cp.Machine, cp.Prefix)
		must(t, err)
		if !reflect.DeepEqual(got, cp) {
			t.Fatalf("checkpoint %s differs", cp.State)
		}
	}
	if _, err := s.Checkpoint("abc", PrefixHash([]record.Choice{{Thread: 2}})); !errors.Is(err, ErrNotFound) {
		t.Fatalf("absent checkpoint: %v", err)
	}
	if _, err := s.Checkpoint("../x", PrefixHash(nil)); err == nil {
		t.Fatal("hostile machine id accepted")
	}
	if err := s.Commit(&Commit{Checkpoints: []*CheckpointRecord{{Machine: "a/b"}}}); err == nil {
		t.Fatal("checkpoint with a hostile machine id committed")
	}
}

func TestPutBinaryIdempotent(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	defer s.Close()
	img := []byte(strings.Repeat("\x7fELF", 1000))
	h1, err := s.PutBinary(img)
	must(t, err)
	before := dump(t, s)
	h2, err := s.PutBinary(img)
	must(t, err)
	if h1 != h2 || len(h1) != 64 {
		t.Fatal("hash")
	}
	sameDump(t, "second PutBinary", before, dump(t, s))
	if u, _ := s.Usage(); u.Kinds["bin"].Bytes >= int64(len(img)) {
		t.Fatalf("binary not compressed: %d bytes", u.Kinds["bin"].Bytes)
	}
	if _, err := s.Binary(strings.Repeat("0", 64)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing binary: %v", err)
	}
	if _, err := s.Frontier("000000000000", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing frontier: %v", err)
	}
	if _, err := s.Job("000000000000", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing job: %v", err)
	}
}

func TestSignatureAndPrefixHash(t *testing.T) {
	a := Signature(record.BugAssert, "f", 8, []string{"f", "main"})
	if len(a) != 16 || a != Signature(record.BugAssert, "f", 8, []string{"f", "main"}) {
		t.Fatal("signature not stable")
	}
	for _, b := range []string{
		Signature(record.BugHeap, "f", 8, []string{"f", "main"}),
		Signature(record.BugAssert, "f", 12, []string{"f", "main"}),
		Signature(record.BugAssert, "g", 8, []string{"f", "main"}),
		Signature(record.BugAssert, "f", 8, []string{"fmain"}),
		Signature(record.BugAssert, "f", 8, []string{"f"}),
	} {
		if a == b {
			t.Fatal("signature collision on different bugs")
		}
	}
	ch := []record.Choice{{Thread: 1}, {Thread: 2, Value: -1}, {Thread: 1, Value: 5}}
	hs := prefixHashes(ch)
	for d := range hs {
		if hs[d] != PrefixHash(ch[:d]) {
			t.Fatalf("prefixHashes[%d] differs", d)
		}
	}
	if PrefixHash(ch[:1]) == PrefixHash(ch[:2]) {
		t.Fatal("prefix hash collision")
	}
}

// BenchmarkCommitBranches encodes and commits synthetic branches shaped
// like a DPOR exploration's: 8 new transitions per branch (the rate
// benchmarks of BENCHMARKS.md execute 8 per interleaving), 40 shared
// accesses each, a few sync events and conflicting pairs, N synced commits
// of "per-commit" branches. "program" draws the transitions from 24 code
// paths, as re-executions of one program do; "random" draws every access
// at random (an incompressible worst case). It reports the time and the
// store bytes per branch.
func BenchmarkCommitBranches(b *testing.B) {
	for _, data := range []string{"program", "random"} {
		for _, per := range []int{64, 256, 1024} {
			b.Run(fmt.Sprintf("%s/per-commit=%d", data, per), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				var pool []*BranchRecord
				if data == "random" {
					pool = synthBranches(r, 1, 512, 8, 40)
				} else {
					pool = programBranches(r, 512, 8, 40)
				}
				benchCommitBranches(b, per, pool)
			})
		}
	}
}

// programBranches makes branches whose transitions re-execute a small
// program: 24 code paths with fixed PCs, stacks, sync events and access
// patterns; the thread decides which of 3 per-thread blocks a path's
// private accesses touch.
func programBranches(r *rand.Rand, n, trans, accesses int) []*BranchRecord {
	type path struct {
		t       *record.Transition
		private []bool
	}
	paths := make([]path, 24)
	for i := range paths {
		t := synthTransition(r, 10+r.IntN(2*accesses-10))
		p := path{t: t, private: make([]bool, len(t.Accesses))}
		for j := range p.private {
			p.private[j] = r.IntN(2) == 0
		}
		paths[i] = p
	}
	var out []*BranchRecord
	for i := 0; i < n; i++ {
		b := &BranchRecord{N: i + 1, Div: r.IntN(5)}
		for j := 0; j < trans; j++ {
			p := paths[r.IntN(len(paths))]
			tid := record.TID(1 + r.IntN(3))
			t := *p.t
			t.Thread = tid
			t.Instructions += uint64(r.IntN(4))
			t.Accesses = append([]record.Access(nil), p.t.Accesses...)
			for k := range t.Accesses {
				if p.private[k] {
					t.Accesses[k].Addr += uint64(tid) * 0x1000
					t.Accesses[k].Block = uint32(tid)
				}
			}
			b.Transitions = append(b.Transitions, &t)
		}
		for j := 0; j < r.IntN(6); j++ {
			b.Pairs = append(b.Pairs, [2]int{r.IntN(trans + b.Div), b.Div + r.IntN(trans)})
		}
		out = append(out, b)
	}
	return out
}

func benchCommitBranches(b *testing.B, per int, pool []*BranchRecord) {
	s := openT(b, b.TempDir(), Options{})
	defer s.Close()
	run := &Run{Command: "explore"}
	must(b, s.NewRun(run))
	job := &Job{Run: run.ID, ID: 0}
	var bytesW int64
	n := 0
	b.ResetTimer()
	for n < b.N {
		k := min(per, b.N-n)
		brs := make([]*BranchRecord, k)
		for i := range brs {
			src := pool[(n+i)%len(pool)]
			brs[i] = &BranchRecord{N: n + i + 1, Div: src.Div, Transitions: src.Transitions, Pairs: src.Pairs}
		}
		job.Interleavings = n + k
		st, err := s.CommitWithStats(&Commit{Job: job, Frontier: make([]byte, 2048), Branches: brs})
		if err != nil {
			b.Fatal(err)
		}
		bytesW += st.BranchBytes
		n += k
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/branch")
	b.ReportMetric(float64(bytesW)/float64(b.N), "bytes/branch")
	e := &enc{}
	encBranches(e, pool)
	b.ReportMetric(float64(len(e.b))/float64(len(pool)), "raw-bytes/branch")
	accesses := 0
	for _, br := range pool {
		for _, t := range br.Transitions {
			accesses += len(t.Accesses)
		}
	}
	b.ReportMetric(float64(accesses)/float64(len(pool)), "accesses/branch")
}

// BenchmarkEncodeBranches is the CPU part of BenchmarkCommitBranches
// (program data): encoding and compressing a chunk of 16 or 256 branches,
// without Pebble and fsync.
func BenchmarkEncodeBranches(b *testing.B) {
	for _, n := range []int{16, 256} {
		b.Run(fmt.Sprintf("chunk=%d", n), func(b *testing.B) { benchEncodeBranches(b, n) })
	}
}

func benchEncodeBranches(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(1, 2))
	pool := programBranches(r, n, 8, 40)
	e := &enc{}
	var out []byte
	b.ResetTimer()
	for i := 0; i < b.N; i += len(pool) {
		e.b = e.b[:0]
		encBranches(e, pool)
		out = packWith(out[:0], e.b, true, fastEncoder())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/branch")
	b.ReportMetric(float64(len(out))/float64(len(pool)), "bytes/branch")
}

// TestConcurrentCommits: jobs commit in parallel (Quicksand's workers)
// while readers read.
func TestConcurrentCommits(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	defer s.Close()
	run := &Run{Command: "quicksand"}
	must(t, s.NewRun(run))
	errs := make(chan error, 4)
	for j := 0; j < 4; j++ {
		go func(j int) {
			r := rand.New(rand.NewPCG(uint64(j), 1))
			job := &Job{Run: run.ID, ID: j}
			for c := 0; c < 5; c++ {
				cp := &CheckpointRecord{Machine: "m", Prefix: PrefixHash(synthChoices(r, 3)), State: []byte{byte(j)},
					Pages: []PageRecord{{Addr: 0, Data: synthPage(byte(c))}}}
				err := s.Commit(&Commit{Job: job, Branches: synthBranches(r, 1+c*3, 3, 2, 4), Checkpoints: []*CheckpointRecord{cp}})
				if err == nil {
					_, err = s.Jobs(run.ID)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(j)
	}
	for j := 0; j < 4; j++ {
		must(t, <-errs)
	}
	for j := 0; j < 4; j++ {
		n := 0
		must(t, s.Branches(run.ID, j, func(*BranchRecord) error { n++; return nil }))
		if n != 15 {
			t.Fatalf("job %d: %d branches", j, n)
		}
	}
	if u, _ := s.Usage(); u.Kinds["page"].Keys != 5 {
		t.Fatalf("%d pages stored, want 5", u.Kinds["page"].Keys)
	}
}

// TestLockedAcrossProcesses: a writer in another process holds the
// workspace; this one gets ErrLocked naming that process; once it is
// killed (kill -9), the store opens and holds what it committed.
func TestLockedAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("LANDSLIDE_STORE_HOLD"); dir != "" {
		s, err := Open(dir, Options{})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		run := &Run{Command: "held"}
		if err := s.NewRun(run); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ready", run.ID)
		select {} // until killed
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockedAcrossProcesses$")
	cmd.Env = append(os.Environ(), "LANDSLIDE_STORE_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.Fatalf("child: %q, %v", line, err)
	}
	runID := strings.TrimSpace(strings.TrimPrefix(line, "ready "))
	want := fmt.Sprintf("workspace %s is in use by another landslide process (pid %d)", dir, cmd.Process.Pid)
	for _, ro := range []bool{false, true} {
		_, err := Open(dir, Options{ReadOnly: ro})
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), want) {
			t.Fatalf("ReadOnly=%v: %v, want %q", ro, err, want)
		}
	}
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	s := openT(t, dir, Options{})
	defer s.Close()
	if _, err := s.Run(runID); err != nil {
		t.Fatalf("the killed writer's run: %v", err)
	}
}

// TestBranchLogEqualsBranches: records committed through a BranchLog
// (encoded as they are added) read back exactly as the same records
// committed as Branches.
func TestBranchLogEqualsBranches(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	defer s.Close()
	run := &Run{Command: "explore"}
	must(t, s.NewRun(run))
	r := rand.New(rand.NewPCG(8, 9))
	brs := synthBranches(r, 1, 40, 3, 4)
	must(t, s.Commit(&Commit{Job: &Job{Run: run.ID, ID: 1}, Branches: brs[:25]}))
	must(t, s.Commit(&Commit{Job: &Job{Run: run.ID, ID: 1}, Branches: brs[25:]}))
	for i, part := range [][]*BranchRecord{brs[:25], brs[25:]} {
		log := &BranchLog{}
		for _, b := range part {
			must(t, log.Add(b))
		}
		if log.Len() != len(part) {
			t.Fatalf("part %d: Len %d", i, log.Len())
		}
		must(t, s.Commit(&Commit{Job: &Job{Run: run.ID, ID: 2}, Log: log}))
	}
	read := func(job int) []string {
		var out []string
		must(t, s.Branches(run.ID, job, func(b *BranchRecord) error {
			out = append(out, fmt.Sprintf("%d %d %v %x", b.N, b.Div, b.Pairs, record.Hash(b.Transitions)))
			return nil
		}))
		return out
	}
	a, b := read(1), read(2)
	if len(a) != 40 || !slices.Equal(a, b) {
		t.Fatalf("through Branches %d records, through a log %d; equal %v", len(a), len(b), slices.Equal(a, b))
	}
	log := &BranchLog{}
	must(t, log.Add(brs[3]))
	if log.Add(brs[2]) == nil {
		t.Error("a log accepted a record with a smaller N")
	}
	if s.Commit(&Commit{Job: &Job{Run: run.ID, ID: 3}, Log: log, Branches: brs[:1]}) == nil {
		t.Error("a commit with both Branches and Log was accepted")
	}
}
