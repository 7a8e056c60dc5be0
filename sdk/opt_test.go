package sdk

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"landslide/kernel"
	"landslide/record"
)

// rw counts one thread's reads and writes of one variable.
type rw struct{ reads, writes int }

func (c rw) String() string { return fmt.Sprintf("%dR %dW", c.reads, c.writes) }

// sharedAccesses builds testdata/plainrace.c with opts (Sources, Output
// and Dir filled in), runs it once under the default schedule with every
// shared access recorded (one per transition: EveryAccess), and counts
// each thread's reads and writes of r, x and y, by the globals' addresses.
func sharedAccesses(t *testing.T, opts Options) map[record.TID]map[string]rw {
	t.Helper()
	root := repoRoot(t)
	opts.Sources = []string{filepath.Join(root, "sdk", "testdata", "plainrace.c")}
	opts.Output = filepath.Join(t.TempDir(), "plainrace.elf")
	opts.Dir = root
	if err := Build(opts); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(opts.Output)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(img, kernel.Config{EveryAccess: true})
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		name     string
		lo, size uint64
	}
	var vars []span
	for _, name := range []string{"r", "x", "y"} {
		addr, size, ok := k.Symbols().Lookup(name)
		if !ok || size != 4 {
			t.Fatalf("global %s: %#x size %d, %v", name, addr, size, ok)
		}
		vars = append(vars, span{name, addr, size})
	}
	counts := map[record.TID]map[string]rw{}
	for steps := 0; ; steps++ {
		if ended, bug := k.Ended(); ended {
			if bug != nil {
				t.Fatalf("the default schedule ends in a bug: %v", bug)
			}
			break
		}
		if steps > 10000 {
			t.Fatal("no end after 10,000 transitions")
		}
		tr, err := k.Step(k.Default())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range tr.Accesses {
			for _, v := range vars {
				if a.Addr < v.lo || a.Addr >= v.lo+v.size {
					continue
				}
				if counts[tr.Thread] == nil {
					counts[tr.Thread] = map[string]rw{}
				}
				c := counts[tr.Thread][v.name]
				if a.Write {
					c.writes++
				} else {
					c.reads++
				}
				counts[tr.Thread][v.name] = c
			}
		}
	}
	return counts
}

// plainraceSource is what each worker thread of plainrace.c reads and
// writes, by the source: r = r + 1; r = r - 1; x = id; y = x;
// assert(y == x). The main thread touches none of them.
var plainraceSource = map[string]rw{"r": {2, 2}, "x": {2, 1}, "y": {1, 1}}

// TestDefaultBuildKeepsSharedAccesses: the default build (the program at
// -O0) keeps every load and store of a plain shared variable that the
// source makes, in each thread: a racy r = r + 1; r = r - 1 and the reread
// of y = x; assert(y == x) are there for the checker to interleave. The
// same program with --cflag -O1 (the old default) loses some, which is the
// regression this test would catch.
func TestDefaultBuildKeepsSharedAccesses(t *testing.T) {
	needClang(t)
	describe := func(counts map[record.TID]map[string]rw) string {
		var b strings.Builder
		for tid := record.TID(1); tid <= 3; tid++ {
			fmt.Fprintf(&b, " thread %d: r %v, x %v, y %v;", tid, counts[tid]["r"], counts[tid]["x"], counts[tid]["y"])
		}
		return b.String()
	}

	o0 := sharedAccesses(t, Options{})
	workers := 0
	for tid, vars := range o0 {
		workers++
		for name, want := range plainraceSource {
			if got := vars[name]; got != want {
				t.Errorf("default build: thread %d makes %v of %s, the source %v;%s", tid, got, name, want, describe(o0))
			}
		}
	}
	if workers != 2 {
		t.Errorf("default build: %d threads touch r, x, y, want the 2 workers;%s", workers, describe(o0))
	}

	// The old default: the compiler folds the accesses of a racy program.
	o1 := sharedAccesses(t, Options{CFlags: []string{"-O1"}})
	lost := false
	for tid := range o0 {
		for name, want := range plainraceSource {
			if got := o1[tid][name]; got.reads < want.reads || got.writes < want.writes {
				lost = true
			}
		}
	}
	if !lost {
		t.Errorf("built with -O1 the program keeps every access of the source: this test no longer shows what -O0 protects;%s", describe(o1))
	}
}

// TestOptLevels: the program's level is ProgramOpt, -O0 by default, the
// SDK's -O1, and the last -O flag of CFlags overrides both.
func TestOptLevels(t *testing.T) {
	for _, c := range []struct {
		opts      Options
		prog, lib string
	}{
		{Options{}, "-O0", "-O1"},
		{Options{ProgramOpt: SDKOpt}, "-O1", "-O1"},
		{Options{CFlags: []string{"-O1"}}, "-O1", "-O1"},
		{Options{CFlags: []string{"-DLANDSLIDE_NONDET_MAX=3"}}, "-O0", "-O1"},
		{Options{CFlags: []string{"-O2", "-Wall", "-Os"}}, "-Os", "-Os"},
		{Options{ProgramOpt: "-O2", CFlags: []string{"-Ofast"}}, "-Ofast", "-Ofast"},
	} {
		if prog, lib := c.opts.OptLevels(); prog != c.prog || lib != c.lib {
			t.Errorf("%+v: program %s, SDK %s; want %s, %s", c.opts, prog, lib, c.prog, c.lib)
		}
	}
	if !strings.Contains(strings.Join(Flags(), " "), " "+SDKOpt+" ") {
		t.Errorf("Flags() %v lacks the SDK's %s", Flags(), SDKOpt)
	}
}

// TestProgramOptChecked: a ProgramOpt that is not an -O flag is an error,
// not a flag passed to clang.
func TestProgramOptChecked(t *testing.T) {
	needClang(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.c"), []byte(tinyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Build(Options{Sources: []string{"ok.c"}, Output: "ok.elf", Lib: "ref", Dir: dir, ProgramOpt: "-fno-inline"})
	if err == nil || !strings.Contains(err.Error(), "ProgramOpt") {
		t.Errorf("ProgramOpt -fno-inline: got %v", err)
	}
}
