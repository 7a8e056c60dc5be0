package sdk

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// needClang fails the test when the toolchain is missing, unless
// LANDSLIDE_NO_CLANG=1 says that is expected.
func needClang(t *testing.T) {
	t.Helper()
	if HaveClang() {
		return
	}
	if os.Getenv("LANDSLIDE_NO_CLANG") == "1" {
		t.Skip("clang/ld.lld not installed and LANDSLIDE_NO_CLANG=1")
	}
	t.Fatal("this test needs clang and ld.lld (apt-get install clang lld); set LANDSLIDE_NO_CLANG=1 to skip it")
}

// repoRoot is the module root, seen from this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if !inRepo(root) {
		t.Fatalf("%s is not the landslide repository root", root)
	}
	return root
}

// isolateCache points the user cache at a temporary directory.
func isolateCache(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
}

func TestFlags(t *testing.T) {
	got := strings.Join(Flags(), " ")
	for _, want := range []string{
		"--target=riscv64-unknown-elf", "-march=rv64ima", "-mabi=lp64", "-g", "-O1",
		"-fno-omit-frame-pointer", "-ffreestanding", "-nostdlib", "-fuse-ld=lld",
		"-static", "-Wl,--build-id=none",
	} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("Flags() = %q, missing %q", got, want)
		}
	}
}

const tinyProgram = `#include <stdio.h>
#include <thread.h>
#include <mutex.h>
#include <assert.h>

static mutex_t m;
static int x;

static void *child(void *arg) {
	mutex_lock(&m);
	x++;
	mutex_unlock(&m);
	return arg;
}

int main(void) {
	thr_init(4096);
	mutex_init(&m);
	int tid = thr_create(child, NULL);
	thr_join(tid, NULL);
	assert(x == 1);
	printf("x = %d\n", x);
	return 0;
}
`

// TestBuildOutsideRepo builds with the embedded SDK and checks the ELF's
// shape: entry at _start, the sync functions as real functions, the stack
// bound globals present.
func TestBuildOutsideRepo(t *testing.T) {
	needClang(t)
	isolateCache(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tiny.c"), []byte(tinyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Build(Options{Sources: []string{"tiny.c"}, Output: "out/tiny.elf", Lib: "ref", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(filepath.Join(dir, "out/tiny.elf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_RISCV || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
		t.Fatalf("not a static RV64 executable: %v %v %v", f.Machine, f.Class, f.Type)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]elf.Symbol{}
	for _, s := range syms {
		if s.Name != "" {
			byName[s.Name] = s
		}
	}
	if s, ok := byName["_start"]; !ok || s.Value != f.Entry {
		t.Errorf("entry %#x is not _start (%+v)", f.Entry, s)
	}
	for _, fn := range []string{
		"mutex_lock", "mutex_unlock", "cond_wait", "cond_signal", "cond_broadcast",
		"sem_wait", "sem_signal", "rwlock_lock", "rwlock_unlock", "rwlock_downgrade",
		"thr_create", "thr_join", "thr_exit", "malloc", "free", "panic", "printf",
	} {
		s, ok := byName[fn]
		if !ok || elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
			t.Errorf("%s is not a real function in the ELF (%+v)", fn, s)
		}
	}
	for _, g := range []string{"ls_main_stack_high", "ls_main_stack_low"} {
		if _, ok := byName[g]; !ok {
			t.Errorf("global %s missing", g)
		}
	}
	// No host paths leak into the binary.
	data, err := os.ReadFile(filepath.Join(dir, "out/tiny.elf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{dir, os.Getenv("XDG_CACHE_HOME")} {
		if bytes.Contains(data, []byte(leak)) {
			t.Errorf("the ELF contains the host path %s", leak)
		}
	}
}

// TestBuildSameInsideAndOutsideRepo: the embedded SDK and the on-disk one
// give the same bytes for the same program.
func TestBuildSameInsideAndOutsideRepo(t *testing.T) {
	needClang(t)
	isolateCache(t)
	root := repoRoot(t)
	const src = "fixtures/src/tests/xplusplus.c"
	body, err := os.ReadFile(filepath.Join(root, src))
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(outside, filepath.Dir(src)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, src), body, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	a := filepath.Join(out, "in.elf")
	b := filepath.Join(out, "out.elf")
	if err := Build(Options{Sources: []string{src}, Output: a, Lib: "ref", Dir: root}); err != nil {
		t.Fatal(err)
	}
	if err := Build(Options{Sources: []string{src}, Output: b, Lib: "ref", Dir: outside}); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if len(x) == 0 || !bytes.Equal(x, y) {
		t.Fatalf("in-repo build (%d bytes) and embedded-SDK build (%d bytes) differ", len(x), len(y))
	}
}

func TestBuildErrors(t *testing.T) {
	needClang(t)
	isolateCache(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.c"), []byte("int main(void) { return nope; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Build(Options{Sources: []string{"bad.c"}, Output: "bad.elf", Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "error") {
		t.Errorf("a compile error should carry clang's message, got %v", err)
	}
	if err := Build(Options{Output: "x.elf", Dir: dir}); err == nil {
		t.Error("no sources: want an error")
	}
	if err := os.Mkdir(filepath.Join(dir, "emptylib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.c"), []byte(tinyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Build(Options{Sources: []string{"ok.c"}, Output: "ok.elf", Lib: "emptylib", Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "no .c or .S files") {
		t.Errorf("empty thread library: got %v", err)
	}
	err = Build(Options{Sources: []string{"ok.c"}, Output: "ok.elf", Lib: "ref", NoLibc: true, Dir: dir})
	if err == nil {
		t.Error("NoLibc with a library: want an error")
	}
}

// TestBuildStudentLibrary builds against a thread library directory whose
// own headers (here mutex_type.h, with an extra field) take precedence.
func TestBuildStudentLibrary(t *testing.T) {
	needClang(t)
	isolateCache(t)
	root := repoRoot(t)
	dir := t.TempDir()
	lib := filepath.Join(dir, "mylib")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(root, "sdk", "thrlib"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(root, "sdk", "thrlib", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lib, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mt, err := os.ReadFile(filepath.Join(root, "sdk", "include", "mutex_type.h"))
	if err != nil {
		t.Fatal(err)
	}
	mt = bytes.Replace(mt, []byte("volatile int owner;"), []byte("volatile int owner;\n\tint student_field;"), 1)
	if err := os.WriteFile(filepath.Join(lib, "mutex_type.h"), mt, 0o644); err != nil {
		t.Fatal(err)
	}
	prog := tinyProgram + "\n_Static_assert(sizeof(mutex_t) == 12, \"the library's mutex_type.h is used\");\n"
	if err := os.WriteFile(filepath.Join(dir, "p.c"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(Options{Sources: []string{"p.c"}, Output: "p.elf", Lib: "mylib", Dir: dir}); err != nil {
		t.Fatal(err)
	}
}

// TestOverlaySources: an overlay replaces files by name and adds new ones.
func TestOverlaySources(t *testing.T) {
	got := overlaySources(
		[]string{"sdk/thrlib/cond.c", "sdk/thrlib/mutex.c", "sdk/thrlib/thread.c"},
		[]string{"bug/mutex.c", "bug/extra.c"})
	want := []string{"sdk/thrlib/cond.c", "bug/extra.c", "bug/mutex.c", "sdk/thrlib/thread.c"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("overlay gave %v, want %v", got, want)
	}
}

// TestUsesPosixFollowsLocalHeaders: a program whose pthread.h include is
// in a header of its own (#include "file", at any depth) links the POSIX
// library; one with none does not; include cycles end.
func TestUsesPosixFollowsLocalHeaders(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("harness.h", "#include \"cycle.h\"\n#include <pthread.h>\n")
	write("cycle.h", "#include \"harness.h\"\n")
	write("plain.h", "#include \"plain.h\"\nint x;\n")
	deep := write("deep.c", "#include \"cycle.h\"\nint main(void) { return 0; }\n")
	plain := write("plain.c", "#include \"plain.h\"\n#include <thread.h>\nint main(void) { return 0; }\n")
	if !usesPosix(deep) {
		t.Error("deep.c includes pthread.h through two headers of its own: not seen")
	}
	if usesPosix(plain) {
		t.Error("plain.c uses no POSIX header: taken for a POSIX program")
	}
}
