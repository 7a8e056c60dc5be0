package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// damageTemplate is a store with two worlds, the first flushed into a
// table and the second in the write-ahead log only, closed; built once.
var damageTemplate struct {
	once sync.Once
	dir  string
	err  error
}

// TestMain removes the template store (built at most once per process).
func TestMain(m *testing.M) {
	code := m.Run()
	if damageTemplate.dir != "" {
		os.RemoveAll(damageTemplate.dir)
	}
	os.Exit(code)
}

func templateStore(t testing.TB) string {
	t.Helper()
	damageTemplate.once.Do(func() {
		dir, err := os.MkdirTemp("", "landslide-damage-template-")
		if err != nil {
			damageTemplate.err = err
			return
		}
		s, err := Open(dir, Options{})
		if err != nil {
			damageTemplate.err = err
			return
		}
		buildWorld(t, s, 1)
		if err := s.Flush(); err != nil {
			damageTemplate.err = err
			return
		}
		buildWorld(t, s, 2)
		damageTemplate.dir, damageTemplate.err = dir, s.Close()
	})
	if damageTemplate.err != nil {
		t.Fatal(damageTemplate.err)
	}
	return damageTemplate.dir
}

// copyStore copies the template's files into a new directory and returns
// it with the sorted file names.
func copyStore(t testing.TB, src string) (string, []string) {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	must(t, err)
	var names []string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644))
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return dst, names
}

// readAll reads everything a command could read: runs, jobs, frontiers,
// states, branches, races, traces, bugs, checkpoints, and Verify. Every
// error must be one of the store's kinds; nothing may panic.
func readAll(t *testing.T, dir string) {
	t.Helper()
	s, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		checkKind(t, "Open", err)
		return
	}
	defer func() { checkKind(t, "Close", s.Close()) }()
	runs, err := s.Runs()
	checkKind(t, "Runs", err)
	for _, r := range runs {
		_, err := s.Binary(r.Binary)
		checkKind(t, "Binary", err)
		jobs, err := s.Jobs(r.ID)
		checkKind(t, "Jobs", err)
		for _, j := range jobs {
			_, err = s.Frontier(r.ID, j.ID)
			checkKind(t, "Frontier", err)
			_, err = s.State(r.ID, j.ID)
			checkKind(t, "State", err)
			checkKind(t, "Branches", s.Branches(r.ID, j.ID, func(*BranchRecord) error { return nil }))
			_, err = s.Races(r.ID, j.ID)
			checkKind(t, "Races", err)
		}
		trs, err := s.Traces(r.ID)
		checkKind(t, "Traces", err)
		for _, tr := range trs {
			for d := 1; d <= len(tr.Choices); d++ {
				_, err := s.Checkpoint("m0000000000000001", PrefixHash(tr.Choices[:d]))
				checkKind(t, "Checkpoint", err)
			}
		}
		_, err = s.Bugs(r.ID)
		checkKind(t, "Bugs", err)
		checkKind(t, "Export", s.Export(r.ID, &bytes.Buffer{}))
	}
	if _, err := s.Verify(); err != nil {
		checkKind(t, "Verify", err)
	}
}

func checkKind(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrVersion) {
		return
	}
	t.Errorf("%s: an error of no store kind: %v", what, err)
}

// TestDamagedTableNoPanic: bytes flipped in a table file make reads of
// the records in that block fail with ErrCorrupt naming the file; nothing
// panics (Pebble's default for corruption is a fatal log, which was a
// panic in the middle of a read), and Verify lists the damage.
func TestDamagedTableNoPanic(t *testing.T) {
	dir, names := copyStore(t, templateStore(t))
	var table string
	for _, n := range names {
		if filepath.Ext(n) == ".sst" {
			table = n
		}
	}
	if table == "" {
		t.Fatalf("the template has no table: %v", names)
	}
	path := filepath.Join(dir, table)
	data, err := os.ReadFile(path)
	must(t, err)
	for i := len(data) / 3; i < len(data)/3+64; i++ {
		data[i] ^= 0xff
	}
	must(t, os.WriteFile(path, data, 0o644))
	readAll(t, dir)

	s := openT(t, dir, Options{ReadOnly: true})
	defer s.Close()
	v, err := s.Verify()
	must(t, err)
	if v.OK() || !slices.ContainsFunc(v.Problems, func(p Problem) bool { return p.File == table }) {
		t.Fatalf("Verify does not name %s: %+v", table, v.Problems)
	}
	var ce *CorruptError
	found := false
	for _, r := range []string{v.Damaged[0]} {
		_, err := s.Bugs(r)
		if errors.As(err, &ce) && ce.File == table {
			found = true
		}
		if err2 := s.Branches(r, 0, func(*BranchRecord) error { return nil }); errors.As(err2, &ce) && ce.File == table {
			found = true
		}
	}
	if !found {
		t.Errorf("no read of damaged run %s names %s", v.Damaged[0], table)
	}
}

// TestLostCommitsDetected: losing the write-ahead log that held a run's
// last commits (deleted here; a damaged log loses its tail the same way)
// is found by the commit counter at the next open, for that run only.
func TestLostCommitsDetected(t *testing.T) {
	dir, names := copyStore(t, templateStore(t))
	for _, n := range names {
		if filepath.Ext(n) == ".log" {
			must(t, os.Remove(filepath.Join(dir, n)))
		}
	}
	s := openT(t, dir, Options{ReadOnly: true})
	defer s.Close()
	lost := s.Lost()
	if len(lost) == 0 {
		t.Fatal("the lost commits went unnoticed")
	}
	runs, err := s.Runs()
	must(t, err)
	if len(runs) != 1 {
		t.Fatalf("%d runs survive, want the flushed one", len(runs))
	}
	for _, l := range lost {
		if l.Run == runs[0].ID {
			t.Errorf("the flushed run %s is reported lost: %v", l.Run, l)
		}
	}
	v, err := s.Verify()
	must(t, err)
	if v.OK() || !slices.Contains(v.Intact, runs[0].ID) {
		t.Errorf("Verify: intact %v, problems %v", v.Intact, v.Problems)
	}
}

// FuzzOpenDamaged damages one file of a store (XOR at an offset, or a
// truncation) and reads everything: no panic, and every error is one of
// the store's kinds. The seeds cover each file kind.
func FuzzOpenDamaged(f *testing.F) {
	for i := uint8(0); i < 12; i++ {
		f.Add(i, uint32(0), []byte{0xff}, false)
		f.Add(i, uint32(1<<31), []byte{0x5a, 0xa5, 0x01}, false)
		f.Add(i, uint32(1<<30), []byte{}, true)
	}
	f.Fuzz(func(t *testing.T, file uint8, at uint32, mask []byte, truncate bool) {
		dir, names := copyStore(t, templateStore(t))
		name := names[int(file)%len(names)]
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		must(t, err)
		if len(data) == 0 {
			return
		}
		off := int(uint64(at) * uint64(len(data)) >> 32)
		if truncate {
			data = data[:off]
		} else {
			for i, m := range mask {
				if off+i < len(data) {
					data[off+i] ^= m
				}
			}
		}
		must(t, os.WriteFile(path, data, 0o644))
		readAll(t, dir)
	})
}

// TestVerifyBranchGap: a commit lost from the middle of the write-ahead
// log, its later commits intact, leaves the job's newest counters and the
// commit counter in agreement but a gap in its branch chunks. Verify must
// name it (offline race analysis stops at it).
func TestVerifyBranchGap(t *testing.T) {
	dir, _ := copyStore(t, templateStore(t))
	s := openT(t, dir, Options{ReadOnly: true})
	v, err := s.Verify()
	must(t, err)
	must(t, s.Close())
	if !v.OK() {
		t.Fatalf("the intact copy: %v", v.Problems)
	}

	// Delete the middle chunk of the first job that has three or more.
	db := rawPebble(t, dir)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte("br/"), UpperBound: []byte("br0")})
	must(t, err)
	byJob := map[string][]string{}
	var order []string
	for it.First(); it.Valid(); it.Next() {
		k := string(it.Key())
		job := k[:strings.LastIndex(k, "/")]
		if byJob[job] == nil {
			order = append(order, job)
		}
		byJob[job] = append(byJob[job], k)
	}
	must(t, it.Close())
	var victim string
	for _, j := range order {
		if len(byJob[j]) >= 3 {
			victim = byJob[j][1]
			break
		}
	}
	if victim == "" {
		t.Fatal("no job of the template has three branch chunks")
	}
	must(t, db.Delete([]byte(victim), pebble.Sync))
	must(t, db.Close())

	s = openT(t, dir, Options{ReadOnly: true})
	defer s.Close()
	v, err = s.Verify()
	must(t, err)
	run := strings.Split(victim, "/")[1]
	found := false
	for _, p := range v.Problems {
		if p.Run == run && strings.Contains(p.What, "are missing") {
			found = true
		}
	}
	if !found || !slices.Contains(v.Damaged, run) {
		t.Errorf("the deleted chunk %s went unnoticed: damaged %v, problems %v", victim, v.Damaged, v.Problems)
	}
}
