package sdk

import (
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPreprocessedGlibc: a program preprocessed against glibc's headers
// (fixtures/src/posix/glibc_assert.c: glibc's declarations, an x86-only
// __regparm__ attribute, assert expanded to __assert_fail, no #include)
// builds as a .c and as a .i, with the POSIX library and glibc/'s
// __assert_fail linked; a program that calls none of glibc's functions
// does not get them.
func TestPreprocessedGlibc(t *testing.T) {
	needClang(t)
	isolateCache(t)
	dir := t.TempDir()
	src, err := os.ReadFile("../fixtures/src/posix/glibc_assert.c")
	if err != nil {
		t.Fatal(err)
	}
	symbols := func(elfPath string) []string {
		f, err := elf.Open(elfPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		syms, err := f.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range syms {
			names = append(names, s.Name)
		}
		return names
	}
	for _, name := range []string{"g.c", "g.i"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		out := p + ".elf"
		if err := Build(Options{Sources: []string{p}, Output: out, Dir: dir}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		names := symbols(out)
		for _, want := range []string{"__assert_fail", "pthread_create", "main"} {
			if !slices.Contains(names, want) {
				t.Errorf("%s: no %s in the ELF", name, want)
			}
		}
	}
	plain := filepath.Join(dir, "plain.c")
	if err := os.WriteFile(plain, []byte("#include <assert.h>\nint main(void) { assert(1); return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(Options{Sources: []string{plain}, Output: plain + ".elf", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(symbols(plain+".elf"), "__assert_fail") {
		t.Error("a program that calls no glibc function links glibc/")
	}
}
