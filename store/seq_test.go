package store

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// stallFS holds every table file's creation until released: the
// memtables that fill up stay unflushed, each with its own write-ahead
// log, as when a process is killed before its background flushes ran.
type stallFS struct {
	vfs.FS
	release chan struct{}
	once    sync.Once
	armed   atomic.Bool
}

func (f *stallFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if f.armed.Load() && strings.HasSuffix(name, ".sst") {
		<-f.release
	}
	return f.FS.Create(name, c)
}

func (f *stallFS) free() { f.once.Do(func() { close(f.release) }) }

// TestLostOlderWAL: a store whose commits span three write-ahead logs,
// none flushed; the middle log is lost (deleted, as when it is moved
// aside because it was damaged), the last one replays. The job records
// and the commit counter agree (the later commits rewrote them), so only
// the commit sequence sees it: every open says so, and after a writer
// opened the store (and flushed, deleting the sequence keys around the
// gap) it still does.
func TestLostOlderWAL(t *testing.T) {
	defer func(d time.Duration) { FlushInterval = d }(FlushInterval)
	FlushInterval = time.Hour
	dir := t.TempDir()
	fs := &stallFS{FS: vfs.Default, release: make(chan struct{})}
	s := openT(t, dir, Options{FS: fs})
	defer func() {
		fs.free()
		s.Close()
	}()
	logs := func(d string) []string {
		m, _ := filepath.Glob(filepath.Join(d, "*.log"))
		slices.Sort(m)
		return m
	}
	run := &Run{Command: "explore", Program: "p", Status: StatusRunning}
	must(t, s.NewRun(run))
	must(t, s.Flush())
	fs.armed.Store(true)
	before := len(logs(dir))
	job := &Job{Run: run.ID, ID: 1, Status: StatusRunning}
	r := rand.New(rand.NewPCG(1, 2))
	front := make([]byte, 100<<10)
	for n := 1; len(logs(dir)) < before+2 || n < 12; n++ {
		if n > 40 {
			t.Fatalf("no three write-ahead logs after %d commits: %v", n, logs(dir))
		}
		for i := range front {
			front[i] = byte(r.Uint32())
		}
		job.Executed, job.Interleavings = n*10, n*10
		must(t, s.Commit(&Commit{Job: job, Frontier: front, Branches: synthBranches(r, (n-1)*10+1, 10, 2, 2)}))
	}
	// The store as a kill would leave it, without the middle log of the
	// commits.
	copyDir, _ := copyStore(t, dir)
	all := logs(copyDir)
	victim := all[len(all)-2]
	must(t, os.Remove(victim))
	t.Logf("logs %v, removed %s", all, filepath.Base(victim))

	check := func(what string, ro bool) *Store {
		t.Helper()
		c := openT(t, copyDir, Options{ReadOnly: ro})
		if len(c.Lost()) > 0 {
			t.Logf("%s: the commit counter also saw: %v", what, c.Lost())
		}
		gaps := c.Gaps()
		if len(gaps) == 0 || !slices.Contains(gaps[0].Runs, run.ID) {
			c.Close()
			t.Fatalf("%s: the lost log went unnoticed: gaps %v", what, gaps)
		}
		if len(c.GapRuns(run.ID)) == 0 {
			t.Errorf("%s: GapRuns(%s) is empty", what, run.ID)
		}
		return c
	}
	c := check("read-only open", true)
	v, err := c.Verify()
	must(t, err)
	must(t, c.Close())
	if v.OK() || !slices.Contains(v.Damaged, run.ID) {
		t.Errorf("Verify: damaged %v, problems %v", v.Damaged, v.Problems)
	}
	// A writer records the gap, then its commits flush and delete the
	// sequence keys around it: later opens still say so.
	c = check("writer open", false)
	job.Commits = 0
	j, err := c.Job(run.ID, 1)
	must(t, err)
	j.Executed++
	must(t, c.Commit(&Commit{Job: j, Flush: true}))
	must(t, c.Close())
	c = check("open after a flush", true)
	must(t, c.Close())
}

// TestSeqNoFalseGap: commits, flushes and reopenings of an intact store
// leave no gap.
func TestSeqNoFalseGap(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 3; round++ {
		s := openT(t, dir, Options{})
		run := &Run{Command: "explore", Program: "p", Status: StatusRunning}
		must(t, s.NewRun(run))
		job := &Job{Run: run.ID, ID: 1}
		for n := 1; n <= 5; n++ {
			job.Executed = n * 3
			must(t, s.Commit(&Commit{Job: job, Branches: synthBranches(r, (n-1)*3+1, 3, 2, 2), Flush: n == 3}))
		}
		if g := s.Gaps(); len(g) > 0 {
			t.Fatalf("round %d: gaps %v", round, g)
		}
		must(t, s.Close())
	}
	s := openT(t, dir, Options{ReadOnly: true})
	defer s.Close()
	if g := s.Gaps(); len(g) > 0 {
		t.Fatalf("gaps %v", g)
	}
	n := 0
	must(t, s.scan([]byte(kindSeq+"/"), func(k, v []byte) error { n++; return nil }))
	if n > 3 {
		t.Errorf("%d sequence keys left: the flushes did not delete them", n)
	}
}
