package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"landslide/store"
)

// faultStore is a template store for fault injection: a finished run with
// a bug (its last commit flushed to a table file) and a run killed in the
// middle (its commits in the write-ahead log only), so that every kind of
// file a store has is present.
type faultStore struct {
	dir            string
	bugRun, killed string
	signature      string
	show           map[string]string // run -> show --json of the intact store
	bugs           string            // bugs --json of the intact store
	resumed        string            // the killed run's resume --json result, intact
}

func buildFaultStore(t *testing.T) *faultStore {
	t.Helper()
	fs := &faultStore{dir: t.TempDir(), show: map[string]string{}}
	fs.bugRun, _ = storedRunID(t, fs.dir, fixture(t, "sem_if/paradise_lost"), "--preemption-bound", "1")

	// The killed run: killed once its counter shows three commits, so that
	// its commits are in the write-ahead log and nothing flushed them.
	c := landslide("--store", fs.dir, "explore", fixture(t, "ref/thr_exit_join"), "--quiet", "--json",
		"--max-interleavings", "3000", "--commit-every", "200", "--commit-interval", "1h", "--trace-dir", t.TempDir())
	var e bytes.Buffer
	c.Stderr = &e
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		data, _ := os.ReadFile(filepath.Join(fs.dir, store.CounterFile))
		if bytes.Contains(data, []byte(" 00000001 3\n")) {
			break
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("the exploration never made three commits; stderr:\n%s", e.String())
		}
		time.Sleep(time.Millisecond)
	}
	c.Process.Kill()
	c.Wait()
	code, out, _ := storeCLI(fs.dir, "ls", "--json")
	var runs []struct{ ID, Status string }
	if err := json.Unmarshal([]byte(out), &runs); err != nil || code != 0 || len(runs) != 2 {
		t.Fatalf("template ls: exit %d %v\n%s", code, err, out)
	}
	for _, r := range runs {
		if r.ID != fs.bugRun {
			fs.killed = r.ID
		}
		_, fs.show[r.ID], _ = storeCLI(fs.dir, "show", r.ID, "--json")
	}
	_, fs.bugs, _ = storeCLI(fs.dir, "bugs", "--json")
	var groups []struct{ Signature string }
	if err := json.Unmarshal([]byte(fs.bugs), &groups); err != nil || len(groups) != 1 {
		t.Fatalf("template bugs: %v\n%s", err, fs.bugs)
	}
	fs.signature = groups[0].Signature
	resumed := fs.copy(t)
	code, fs.resumed, _ = storeCLI(resumed, "resume", fs.killed, "--json", "--quiet", "--trace-dir", t.TempDir())
	if code != ExitBudget {
		t.Fatalf("resume of the intact template: exit %d\n%s", code, fs.resumed)
	}
	return fs
}

// copy copies the template store into a new directory.
func (fs *faultStore) copy(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(fs.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(fs.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// fileKind is the kind of a store file, for naming cases.
func fileKind(name string) string {
	switch {
	case strings.HasSuffix(name, ".sst"):
		return "sst"
	case strings.HasSuffix(name, ".log"):
		return "log"
	case strings.HasPrefix(name, "MANIFEST-"):
		return "MANIFEST"
	case strings.HasPrefix(name, "OPTIONS-"):
		return "OPTIONS"
	case strings.HasPrefix(name, "marker."):
		return "marker"
	}
	return name
}

// safeCLI runs the command line in-process; a panic is returned, not
// raised, so that one case's failure does not end the suite.
func safeCLI(args ...string) (code int, out, errOut string, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	code, out, errOut = runCLI(args...)
	return
}

// TestStoreFaultInjection: for every file of a store (tables, logs,
// MANIFEST, OPTIONS, markers, LOCK, the lock file, the commit counter),
// flip bytes in the middle, truncate it to half, or delete it; then every
// read command and resume. No command may panic; each either fails with
// exit 2 and one line (warnings aside), or answers as on the intact
// store; and no run's status, counts or bugs change without a word.
func TestStoreFaultInjection(t *testing.T) {
	fs := buildFaultStore(t)
	entries, err := os.ReadDir(fs.dir)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, e := range entries {
		kinds[fileKind(e.Name())] = true
	}
	for _, k := range []string{"sst", "log", "MANIFEST", "OPTIONS", "marker", "LOCK", store.LockFile, store.CounterFile} {
		if !kinds[k] {
			t.Errorf("the template store has no %s file: the suite would not cover it", k)
		}
	}
	// A full disk under a store whose last commits are only in the
	// write-ahead log (the killed run's): resume and import must fail at
	// once with one line, as TestFullDiskAtOpen checks for a flushed one.
	t.Run("full-disk-unflushed-log", func(t *testing.T) {
		for _, args := range [][]string{{"resume", fs.killed, "--quiet", "--trace-dir", t.TempDir()}, {"import", filepath.Join(t.TempDir(), "none.tar")}} {
			fullDiskFails(t, fs.copy(t), args...)
		}
	})
	faults := map[string]func(data []byte) ([]byte, bool){
		"flip": func(b []byte) ([]byte, bool) {
			if len(b) == 0 {
				return nil, false
			}
			c := bytes.Clone(b)
			lo := len(c) / 2
			for i := lo; i < min(lo+64, len(c)); i++ {
				c[i] ^= 0x5a
			}
			return c, true
		},
		"truncate": func(b []byte) ([]byte, bool) {
			if len(b) == 0 {
				return nil, false
			}
			return b[:len(b)/2], true
		},
		"delete": func(b []byte) ([]byte, bool) { return nil, true },
	}
	names := []string{"flip", "truncate", "delete"}
	cases := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(fs.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, fname := range names {
			damaged, ok := faults[fname](data)
			if !ok {
				continue
			}
			cases++
			t.Run(fmt.Sprintf("%s/%s/%s", fileKind(e.Name()), e.Name(), fname), func(t *testing.T) {
				dir := fs.copy(t)
				path := filepath.Join(dir, e.Name())
				if fname == "delete" {
					os.Remove(path)
				} else if err := os.WriteFile(path, damaged, 0o644); err != nil {
					t.Fatal(err)
				}
				tables := func() []string {
					m, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
					return m
				}
				before := tables()
				fs.check(t, dir)
				// Nothing a command did may throw a table away (as creating
				// a new store over a damaged one would). Fewer tables may
				// be a compaction (the store's flushes delete keys), which
				// keeps the flushed run.
				if after := tables(); len(after) < len(before) {
					if code, out, _ := storeCLI(dir, "ls", "--json"); !strings.Contains(out, `"id": "`+fs.bugRun+`"`) {
						t.Errorf("tables were removed: %v, then %v, and the flushed run %s is gone: exit %d\n%s", before, after, fs.bugRun, code, out)
					}
				}
			})
		}
	}
	t.Logf("%d fault cases over %d files", cases, len(entries))
	t.Run("lost-older-log", fs.checkLostOlderLog)
}

// checkLostOlderLog: a write-ahead log lost from the middle (an older
// log moved aside or deleted, later ones replayed) leaves the job records
// and the commit counter in agreement; what shows it is a gap in the
// store's commit sequence (store/seq.go), which the store's own test
// makes with a real log (TestLostOlderWAL). Here the gap is made directly,
// in the killed run's commits: every command that reads the store must
// warn (ls, show and bugs at exit 0), and verify-store fail.
func (fs *faultStore) checkLostOlderLog(t *testing.T) {
	dir := fs.copy(t)
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte("seq/"), UpperBound: []byte("seq0")})
	if err != nil {
		t.Fatal(err)
	}
	var keys [][]byte
	for it.First(); it.Valid(); it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
	}
	it.Close()
	if len(keys) < 3 {
		db.Close()
		t.Fatalf("the template holds %d commit sequence keys, want the killed run's unflushed commits", len(keys))
	}
	if err := db.Delete(keys[len(keys)/2], pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	const warning = "lost with a write-ahead log that is gone"
	for _, args := range [][]string{
		{"ls"}, {"ls", "--json"}, {"show", fs.killed}, {"show", fs.killed, "--json"}, {"show", fs.bugRun}, {"bugs"},
		{"races", fs.killed}, {"export", fs.killed, "-o", filepath.Join(t.TempDir(), "a.lsa")}, {"replay", fs.signature[:12]},
	} {
		code, out, errOut := storeCLI(dir, args...)
		if !strings.Contains(errOut, "landslide: warning: store "+dir+": commit") || !strings.Contains(errOut, warning) ||
			!strings.Contains(errOut, fs.killed) {
			t.Errorf("%v: exit %d, no warning of the lost log:\n%s%s", args, code, out, errOut)
		}
		if (args[0] == "ls" || args[0] == "show" || args[0] == "bugs") && code != ExitOK {
			t.Errorf("%v: exit %d, want 0 with the warning:\n%s", args, code, errOut)
		}
	}
	if code, out, _ := storeCLI(dir, "verify-store"); code != ExitUsage || !strings.Contains(out, warning) {
		t.Errorf("verify-store: exit %d\n%s", code, out)
	}
}

// check runs every read command, then resume, on the damaged store dir.
func (fs *faultStore) check(t *testing.T, dir string) {
	t.Helper()
	// damage: a command before verify-store reported damage or lost
	// commits, which verify-store must then report too.
	damage := ""
	run := func(args ...string) (int, string, string) {
		t.Helper()
		code, out, errOut, p := safeCLI(append([]string{"--store", dir}, args...)...)
		if damage == "" && (strings.Contains(errOut, "damaged") || strings.Contains(errOut, "lost commits")) {
			damage = fmt.Sprintf("%v: %s", args, strings.TrimSpace(errOut))
		}
		if p != nil {
			t.Fatalf("%v: panic: %v", args, p)
		}
		if strings.Contains(out+errOut, "goroutine ") || strings.Contains(out+errOut, "panic:") {
			t.Fatalf("%v: a panic trace:\n%s%s", args, out, errOut)
		}
		if code == ExitUsage {
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
				if !strings.HasPrefix(l, "landslide: warning: ") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "landslide: ") {
				t.Errorf("%v: exit 2 without a one-line error:\n%s", args, errOut)
			}
		}
		return code, out, errOut
	}
	warned := func(errOut, run string) bool {
		return strings.Contains(errOut, "warning: ") && strings.Contains(errOut, run)
	}

	code, out, errOut := run("ls", "--json")
	if code == ExitOK {
		var runs []struct{ ID, Status string }
		if err := json.Unmarshal([]byte(out), &runs); err != nil {
			t.Fatalf("ls --json: %v\n%s", err, out)
		}
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		sort.Strings(ids)
		want := []string{fs.bugRun, fs.killed}
		sort.Strings(want)
		if strings.Join(ids, " ") != strings.Join(want, " ") && !strings.Contains(errOut, "warning") {
			t.Errorf("ls answers %v without a word, the store holds %v", ids, want)
		}
	}
	run("ls")
	for _, id := range []string{fs.bugRun, fs.killed} {
		code, out, errOut := run("show", id, "--json")
		// (An interrupted run's resume hint names the store.)
		out = strings.ReplaceAll(out, dir, fs.dir)
		if code == ExitOK && out != fs.show[id] && !warned(errOut, id) {
			t.Errorf("show %s changed silently:\n%s\nintact:\n%s", id, out, fs.show[id])
		}
		run("races", id)
		run("export", id, "-o", filepath.Join(t.TempDir(), "a.lsa"))
	}
	code, out, errOut = run("bugs", "--json")
	if code == ExitOK && out != fs.bugs && !strings.Contains(errOut, "warning") {
		t.Errorf("bugs changed silently:\n%s\nintact:\n%s", out, fs.bugs)
	}
	if code, _, _ := run("replay", fs.signature[:12]); code != ExitBug && code != ExitUsage {
		t.Errorf("replay of the bug: exit %d", code)
	}
	if code, out, _ := run("verify-store"); code != ExitOK && code != ExitUsage {
		t.Errorf("verify-store: exit %d", code)
	} else if code == ExitOK && damage != "" {
		t.Errorf("verify-store finds no damage, but %s\n%s", damage, out)
	}
	// Resume last (it writes): it fails with one line, or ends as the
	// intact store's resume did (redoing any lost work).
	code, out, errOut = run("resume", fs.killed, "--json", "--quiet", "--trace-dir", t.TempDir())
	if os.Getenv("FAULT_DEBUG") != "" {
		t.Logf("resume: exit %d %s", code, strings.TrimSpace(errOut))
	}
	if code != ExitUsage && !sameResult(out, fs.resumed) {
		t.Errorf("resume: exit %d\n%s\nintact:\n%s", code, out, fs.resumed)
	}
}

// sameResult compares explore --json results without the run's timings.
func sameResult(a, b string) bool {
	strip := func(s string) string {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return s
		}
		// Times, and the distinct traces counted: those are of the
		// executions this process ran, a lower bound that depends on the
		// commit it resumed from (an earlier one when a damaged log lost
		// the later ones).
		for _, k := range []string{"elapsed", "elapsed_ms", "elapsed_seconds", "rate", "cpu", "wall", "traces", "traces_lower_bound"} {
			delete(m, k)
		}
		out, _ := json.Marshal(m)
		return string(out)
	}
	return strip(a) == strip(b)
}
