package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"landslide/store"
)

// storeCLI runs landslide with --store dir.
func storeCLI(dir string, args ...string) (int, string, string) {
	return runCLI(append([]string{"--store", dir}, args...)...)
}

// storedRunID explores prog into dir and returns the run's ID.
func storedRunID(t *testing.T, dir, prog string, args ...string) (string, int) {
	t.Helper()
	code, out, errOut := storeCLI(dir, append([]string{"explore", prog, "--quiet", "--json", "--trace-dir", t.TempDir()}, args...)...)
	var doc struct{ Run string }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Run == "" {
		t.Fatalf("explore %s: exit %d, no run ID: %v\n%s\n%s", prog, code, err, out, errOut)
	}
	return doc.Run, code
}

// TestReplayAndRacesCLI: a bug found by explore replays from the store
// (from a checkpoint and from the start, step by step) to the same report;
// races re-analyses the stored run offline in both modes, deterministically.
func TestReplayAndRacesCLI(t *testing.T) {
	dir := t.TempDir()
	run, code := storedRunID(t, dir, fixture(t, "sem_if/paradise_lost"), "--preemption-bound", "1", "--checkpoint-every", "8")
	if code != ExitBug {
		t.Fatalf("explore: exit %d, want the bug", code)
	}
	var reports [2]string
	for i, extra := range [][]string{nil, {"--from-start"}} {
		code, out, errOut := storeCLI(dir, append([]string{"replay", run}, extra...)...)
		if code != ExitBug || !strings.Contains(out, "two threads in the critical section") {
			t.Fatalf("replay %v: exit %d\n%s\n%s", extra, code, out, errOut)
		}
		from := regexp.MustCompile(`replayed \d+ transitions from (.*): identical`).FindStringSubmatch(errOut)
		if from == nil || (i == 0) != strings.Contains(from[1], "checkpoint") {
			t.Errorf("replay %v: %q", extra, errOut)
		}
		reports[i] = out
	}
	if reports[0] != reports[1] {
		t.Errorf("the report from a checkpoint differs from the one from the start")
	}
	code, out, _ := storeCLI(dir, "replay", run, "--step", "--from-start")
	if code != ExitBug || !strings.HasPrefix(out, "#0 thread 1 -> ") {
		t.Errorf("replay --step: exit %d\n%.300s", code, out)
	}
	for _, format := range []string{"html", "json"} {
		if code, out, _ := storeCLI(dir, "replay", run, "--format", format); code != ExitBug || len(out) < 1000 {
			t.Errorf("replay --format %s: exit %d, %d bytes", format, code, len(out))
		}
	}

	// --checkpoint-every 0 stores no checkpoint: the replay starts from
	// the program's start. A store of its own: checkpoints are shared by
	// the runs of one machine.
	bare := t.TempDir()
	run, _ = storedRunID(t, bare, fixture(t, "sem_if/paradise_lost"), "--preemption-bound", "1", "--checkpoint-every", "0")
	if code, _, errOut := storeCLI(bare, "replay", run); code != ExitBug || !strings.Contains(errOut, "from the program's start") {
		t.Errorf("replay of a run without checkpoints: exit %d, %q", code, errOut)
	}

	// fig2_6b: Limited HB's documented false positive, which Pure HB
	// refutes, from one stored run.
	run, _ = storedRunID(t, dir, fixture(t, "ref/fig2_6b"), "--without", "thr_create", "--without", "thr_exit", "--without", "thr_join")
	var answers []string
	for _, hb := range []string{"limited", "pure", "limited", "pure"} {
		code, out, errOut := storeCLI(dir, "races", run, "--hb", hb)
		if code != ExitOK {
			t.Fatalf("races --hb %s: exit %d\n%s", hb, code, errOut)
		}
		answers = append(answers, out)
	}
	if answers[0] != answers[2] || answers[1] != answers[3] {
		t.Error("the same races command twice gave different answers")
	}
	if !strings.Contains(answers[0], "fig2_6b.c") || strings.Contains(answers[1], "fig2_6b.c") {
		t.Errorf("want the race on x under Limited HB only:\nlimited:\n%s\npure:\n%s", answers[0], answers[1])
	}
}

// TestArchiveRoundTrip: export then import into a fresh workspace gives
// the same ls and bugs output, and every bug replays there; a second
// import changes nothing; a damaged archive is rejected and leaves the
// store unchanged.
func TestArchiveRoundTrip(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	var runs []string
	for _, f := range []string{"sem_if/paradise_lost", "uaf_exit/thr_exit_join", "ref/mutex_test"} {
		id, _ := storedRunID(t, src, fixture(t, f), "--preemption-bound", "1")
		runs = append(runs, id)
	}
	archives := t.TempDir()
	for _, id := range runs {
		if code, out, errOut := storeCLI(src, "export", id, "-o", filepath.Join(archives, id+".lsa")); code != ExitOK {
			t.Fatalf("export: exit %d\n%s%s", code, out, errOut)
		}
	}
	for _, id := range runs {
		if code, out, errOut := storeCLI(dst, "import", filepath.Join(archives, id+".lsa")); code != ExitOK || !strings.Contains(out, "imported run "+id) {
			t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
		}
	}
	for _, cmd := range [][]string{{"ls"}, {"bugs"}, {"ls", "--json"}, {"bugs", "--json"}} {
		_, a, _ := storeCLI(src, cmd...)
		_, b, _ := storeCLI(dst, cmd...)
		if a != b {
			t.Errorf("%v differs after export/import:\n%s\n---\n%s", cmd, a, b)
		}
	}
	_, bugs, _ := storeCLI(dst, "bugs")
	if !strings.Contains(bugs, "2 bugs, 2 distinct") {
		t.Errorf("bugs:\n%s", bugs)
	}
	for _, id := range runs[:2] {
		if code, out, errOut := storeCLI(dst, "replay", id); code != ExitBug {
			t.Errorf("replaying imported run %s: exit %d\n%s%s", id, code, out, errOut)
		}
	}
	// A bug named by its signature, as bugs prints it.
	var groups []struct{ Signature string }
	_, out, _ := storeCLI(dst, "bugs", "--json")
	if err := json.Unmarshal([]byte(out), &groups); err != nil || len(groups) != 2 {
		t.Fatalf("bugs --json: %v\n%s", err, out)
	}
	for _, g := range groups {
		if code, out, errOut := storeCLI(dst, "replay", g.Signature[:8]); code != ExitBug {
			t.Errorf("replay by signature %s: exit %d\n%s%s", g.Signature, code, out, errOut)
		}
	}
	before := dumpStore(t, dst)
	code, out, _ := storeCLI(dst, "import", filepath.Join(archives, runs[0]+".lsa"))
	if code != ExitOK || !strings.Contains(out, "already in the store") {
		t.Errorf("second import: exit %d\n%s", code, out)
	}
	data, err := os.ReadFile(filepath.Join(archives, runs[0]+".lsa"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.lsa")
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)/2] },
		func(b []byte) []byte { c := append([]byte(nil), b...); c[len(c)/2] ^= 0x40; return c },
		func(b []byte) []byte { return []byte("not an archive at all") },
	} {
		if err := os.WriteFile(bad, damage(data), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := storeCLI(dst, "import", bad)
		if code != ExitUsage || !strings.Contains(errOut, "not imported: invalid archive: ") ||
			!strings.Contains(errOut, "nothing of them was written") || strings.Count(errOut, "invalid archive") != 1 {
			t.Errorf("damaged archive: exit %d\n%s%s", code, out, errOut)
		}
	}
	if after := dumpStore(t, dst); after != before {
		t.Error("a duplicate or damaged import changed the store")
	}

	// A bad archive among good ones: the good ones before and after it
	// are imported, the bad one is named, and the exit code says so.
	mixed := t.TempDir()
	code, out, errOut := storeCLI(mixed, "import", filepath.Join(archives, runs[0]+".lsa"), bad, filepath.Join(archives, runs[1]+".lsa"))
	if code != ExitUsage || strings.Count(errOut, "not imported:") != 1 || !strings.Contains(errOut, bad) ||
		!strings.Contains(errOut, "1 of 3 archives not imported") {
		t.Errorf("import good, bad, good: exit %d\n%s%s", code, out, errOut)
	}
	for _, id := range runs[:2] {
		if code, _, errOut := storeCLI(mixed, "show", id); code != ExitOK {
			t.Errorf("run %s not imported past the bad archive: exit %d %s", id, code, errOut)
		}
	}
}

// dumpStore is every run, job and bug of a store as JSON.
func dumpStore(t *testing.T, dir string) string {
	t.Helper()
	_, ls, _ := storeCLI(dir, "ls", "--json")
	var runs []struct{ ID string }
	if err := json.Unmarshal([]byte(ls), &runs); err != nil {
		t.Fatal(err)
	}
	all := ls
	for _, r := range runs {
		_, s, _ := storeCLI(dir, "show", r.ID, "--json")
		all += s
	}
	return all
}

// failingFS fails every write with errno once armed: a full disk
// (ENOSPC) or a read-only one (EROFS). With armAfter > 0 it arms itself
// after that many syncs (the disk fills up in the middle of a run).
type failingFS struct {
	vfs.FS
	errno    syscall.Errno
	armed    *atomic.Bool
	syncs    *atomic.Int64
	armAfter int64
	// dirsOK: MkdirAll of a directory that exists succeeds, as on a real
	// full disk (the store's open then reaches Pebble's own goroutines).
	dirsOK bool
}

func (f failingFS) fail() error {
	if f.armed.Load() {
		return f.errno
	}
	return nil
}

type failingFile struct {
	vfs.File
	fs failingFS
}

func (f failingFile) Write(p []byte) (int, error) {
	if err := f.fs.fail(); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f failingFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.fail(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f failingFile) synced() error {
	if f.fs.armAfter > 0 && f.fs.syncs.Add(1) > f.fs.armAfter {
		f.fs.armed.Store(true)
	}
	return f.fs.fail()
}

func (f failingFile) Sync() error {
	if err := f.synced(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f failingFile) SyncData() error {
	if err := f.synced(); err != nil {
		return err
	}
	return f.File.SyncData()
}

func (f failingFile) SyncTo(n int64) (bool, error) {
	if err := f.synced(); err != nil {
		return false, err
	}
	return f.File.SyncTo(n)
}

func (f failingFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	fh, err := f.FS.Create(name, cat)
	if err != nil {
		return nil, err
	}
	return failingFile{fh, f}, nil
}

func (f failingFS) OpenReadWrite(name string, cat vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	fh, err := f.FS.OpenReadWrite(name, cat, opts...)
	if err != nil {
		return nil, err
	}
	return failingFile{fh, f}, nil
}

func (f failingFS) ReuseForWrite(old, name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	fh, err := f.FS.ReuseForWrite(old, name, cat)
	if err != nil {
		return nil, err
	}
	return failingFile{fh, f}, nil
}

func (f failingFS) Rename(a, b string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.FS.Rename(a, b)
}

func (f failingFS) Remove(name string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.FS.Remove(name)
}

func (f failingFS) MkdirAll(dir string, perm os.FileMode) error {
	if st, err := f.FS.Stat(dir); err == nil && st.IsDir() && f.dirsOK {
		return nil // as on a full disk: nothing to write
	}
	if err := f.fail(); err != nil {
		return err
	}
	return f.FS.MkdirAll(dir, perm)
}

// TestStoreFailures: a full disk, a read-only disk, a workspace locked by
// another process and a store of an unknown version each give exit 2
// with a clear message, and lose nothing already committed.
func TestStoreFailures(t *testing.T) {
	prog := fixture(t, "ref/mutex_test")
	bug := fixture(t, "sem_if/paradise_lost")
	for _, c := range []struct {
		name  string
		errno syscall.Errno
		msg   string
	}{{"full disk", syscall.ENOSPC, "no space left on device"}, {"read-only disk", syscall.EROFS, "read-only file system"}} {
		dir := t.TempDir()
		first, _ := storedRunID(t, dir, bug, "--preemption-bound", "1")
		before := dumpStore(t, dir)
		armed := &atomic.Bool{}
		armed.Store(true)
		storeFS = failingFS{FS: vfs.Default, errno: c.errno, armed: armed, syncs: &atomic.Int64{}}
		code, _, errOut := storeCLI(dir, "explore", prog, "--quiet", "--trace-dir", t.TempDir())
		storeFS = nil
		if code != ExitUsage || !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: exit %d, want 2 with %q:\n%s", c.name, code, c.msg, errOut)
		}
		if after := dumpStore(t, dir); after != before {
			t.Errorf("%s: the store changed:\n%s\n---\n%s", c.name, before, after)
		}
		if code, _, errOut := storeCLI(dir, "replay", first); code != ExitBug {
			t.Errorf("%s: the earlier bug no longer replays: exit %d\n%s", c.name, code, errOut)
		}
	}

	// A disk that fills up in the middle of an exploration: the commits
	// before it stay, and resume finishes the run as if nothing happened.
	prog2 := fixture(t, "ref/thr_exit_join")
	limit := []string{"--max-interleavings", "8000", "--json", "--quiet", "--commit-every", "100", "--commit-interval", "50ms"}
	_, out, _ := runCLI(append([]string{"explore", prog2, "--no-store", "--trace-dir", t.TempDir()}, limit...)...)
	var want, got struct{ Interleavings, Executed int }
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}
	// It runs as a separate process: when the full disk hits one of
	// Pebble's own goroutines (a flush, the WAL's rotation), Pebble fails
	// fatally with its mutexes held, as it would on a real disk; the
	// process must end with one line (store.BackgroundFatal), not a Go
	// panic trace, and the store must hold the commits before it.
	dir := t.TempDir()
	c := landslide(append([]string{"--store", dir, "explore", prog2, "--trace-dir", t.TempDir()}, limit...)...)
	c.Env = append(c.Env, "LANDSLIDE_TEST_FULL_AFTER=30")
	var e bytes.Buffer
	c.Stderr = &e
	c.Run()
	code, errOut := c.ProcessState.ExitCode(), e.String()
	if code != ExitUsage || !strings.Contains(errOut, "no space left") || strings.Contains(errOut, "goroutine ") {
		t.Fatalf("disk full during the exploration: exit %d, want 2 and one line, no Go panic trace\n%s", code, errOut)
	}
	t.Logf("disk full during the exploration: %s", errOut)
	_, ls, _ := storeCLI(dir, "ls", "--json")
	var runs []struct {
		ID            string
		Status        string
		Interleavings int
	}
	if err := json.Unmarshal([]byte(ls), &runs); err != nil || len(runs) != 1 || runs[0].Status != "interrupted" || runs[0].Interleavings == 0 {
		t.Fatalf("after the disk filled up: %v\n%s", err, ls)
	}
	code, out, errOut = storeCLI(dir, "resume", runs[0].ID, "--json", "--quiet", "--trace-dir", t.TempDir())
	if err := json.Unmarshal([]byte(out), &got); err != nil || got != want {
		t.Errorf("resumed after the disk filled up at %d interleavings: %+v (exit %d), uninterrupted %+v\n%s",
			runs[0].Interleavings, got, code, want, errOut)
	}

	// Locked: another process (here another open) holds the workspace.
	dir = t.TempDir()
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"explore", prog, "--quiet"}, {"bugs"}, {"import", "/dev/null"}} {
		code, _, errOut := storeCLI(dir, args...)
		if code != ExitUsage || !strings.Contains(errOut, "in use by another landslide process") {
			t.Errorf("%v on a locked workspace: exit %d\n%s", args, code, errOut)
		}
	}
	// ls says who holds it (here nothing published yet), exit 0.
	if code, out, errOut := storeCLI(dir, "ls"); code != ExitOK || !strings.Contains(errOut, "in use by landslide process") ||
		!strings.Contains(out, "No run is being explored") {
		t.Errorf("ls on a locked workspace: exit %d\n%s%s", code, out, errOut)
	}
	st.Close()

	// A store of an unknown format version.
	dir = t.TempDir()
	storedRunID(t, dir, prog, "--max-interleavings", "10")
	db, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatMinSupported, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("meta/version"), []byte("99"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, args := range [][]string{{"explore", prog, "--quiet"}, {"ls"}} {
		code, _, errOut := storeCLI(dir, args...)
		if code != ExitUsage || !strings.Contains(errOut, `format version "99"`) || !strings.Contains(errOut, "supports version 1") {
			t.Errorf("%v on a version-99 store: exit %d\n%s", args, code, errOut)
		}
	}
}

type quiet struct{}

func (quiet) Infof(string, ...any)         {}
func (quiet) Errorf(string, ...any)        {}
func (quiet) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

// TestReplayNoTraceMessage: replay of a run that stored no trace is a
// user's mistake, said in one line, without "(nothing already committed
// is lost)", which only means something after a failed write.
func TestReplayNoTraceMessage(t *testing.T) {
	dir := t.TempDir()
	id, code := storedRunID(t, dir, fixture(t, "ref/mutex_test"), "--max-interleavings", "20")
	if code == ExitBug {
		t.Fatalf("the run found a bug; the test needs one without")
	}
	code, _, errOut := storeCLI(dir, "replay", id)
	if code != ExitUsage || !strings.Contains(errOut, "has no stored trace") {
		t.Fatalf("replay %s: exit %d, want 2 saying there is no trace:\n%s", id, code, errOut)
	}
	if strings.Contains(errOut, "nothing already committed is lost") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("replay %s: want one line without a word on committed work:\n%s", id, errOut)
	}
}

// TestFullDiskAtOpen: on a disk already full, resume and import open the
// store for writing and Pebble fails in one of its own goroutines (the
// flush of the replayed write-ahead log, the manifest): each command ends
// at once with one line and exit 2, never a Go panic trace (it printed
// one, and on a real disk the fault trial saw them hang), and the store
// keeps everything: ls still lists the run, and its replay still fails
// the same way once the disk has room.
func TestFullDiskAtOpen(t *testing.T) {
	dir := t.TempDir()
	id, _ := storedRunID(t, dir, fixture(t, "sem_if/paradise_lost"), "--preemption-bound", "1")
	arch := filepath.Join(t.TempDir(), "a.tar")
	other := t.TempDir()
	id2, _ := storedRunID(t, other, fixture(t, "ref/fig1"), "--max-interleavings", "50")
	if code, _, errOut := storeCLI(other, "export", id2, "-o", arch); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	before := dumpStore(t, dir)
	for _, args := range [][]string{{"import", arch}, {"resume", id, "--quiet", "--trace-dir", t.TempDir()}} {
		fullDiskFails(t, dir, args...)
	}
	if after := dumpStore(t, dir); after != before {
		t.Errorf("the store changed:\n%s\n---\n%s", before, after)
	}
	if code, _, errOut := storeCLI(dir, "replay", id); code != ExitBug {
		t.Errorf("the stored bug no longer replays: exit %d\n%s", code, errOut)
	}
}

// fullDiskFails runs landslide --store dir args on a disk full from the
// start: it must end within a minute, exit 2, with one line naming the
// full disk and no Go panic trace.
func fullDiskFails(t *testing.T, dir string, args ...string) {
	t.Helper()
	c := landslide(append([]string{"--store", dir}, args...)...)
	c.Env = append(c.Env, "LANDSLIDE_TEST_FULL_AFTER=0")
	var e bytes.Buffer
	c.Stderr = &e
	done := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		c.Process.Kill()
		t.Fatalf("%v on a full disk: still running after a minute", args)
	}
	errOut := e.String()
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code := c.ProcessState.ExitCode(); code != ExitUsage || len(lines) != 1 || !strings.Contains(errOut, "no space left on device") || strings.Contains(errOut, "goroutine ") {
		t.Errorf("%v on a full disk: exit %d, stderr\n%s\nwant exit 2 and one line", args, code, errOut)
	}
}
